package xds

import (
	"net/netip"
	"testing"
)

var (
	sourceA = netip.MustParseAddr("10.0.0.1")
	sourceB = netip.MustParseAddr("10.0.0.2")
	sourceC = netip.MustParseAddr("10.0.0.3")
)

// admitOK admits one connection from source and fails on a refusal.
func admitOK(t *testing.T, a *admission, source netip.Addr) (*slot, []*slot) {
	t.Helper()
	s, evicted, refused := a.admit(source, nil)
	if refused != "" {
		t.Fatalf("connection from %s refused (%s), want admitted", source, refused)
	}
	return s, evicted
}

func wantRefused(t *testing.T, a *admission, source netip.Addr, reason string) {
	t.Helper()
	if s, evicted, refused := a.admit(source, nil); refused != reason || s != nil || len(evicted) != 0 {
		t.Fatalf("connection from %s: slot %v, evicted %d, refused %q; want refused %q and nothing evicted", source, s, len(evicted), refused, reason)
	}
}

func wantCounts(t *testing.T, a *admission, open, handshaking int) {
	t.Helper()
	if o, h := a.counts(); o != open || h != handshaking {
		t.Fatalf("open %d, handshaking %d; want %d, %d", o, h, open, handshaking)
	}
}

func establish(t *testing.T, a *admission, s *slot) {
	t.Helper()
	if !a.established(s) {
		t.Fatal("established() = false for a handshaking connection")
	}
}

func TestAdmissionRefusesPerSourceWhenEstablished(t *testing.T) {
	a := newAdmission(ConnectionLimits{PerSource: 2})
	for range 2 {
		s, _ := admitOK(t, a, sourceA)
		establish(t, a, s)
	}
	wantRefused(t, a, sourceA, RefusedPerSource)
	admitOK(t, a, sourceB) // another address is not counted against A
	wantCounts(t, a, 3, 1)
}

func TestAdmissionRefusesTotalWhenEstablished(t *testing.T) {
	a := newAdmission(ConnectionLimits{Connections: 2})
	for _, src := range []netip.Addr{sourceA, sourceB} {
		s, _ := admitOK(t, a, src)
		establish(t, a, s)
	}
	wantRefused(t, a, sourceC, RefusedTotal)
	wantCounts(t, a, 2, 0)
}

func TestAdmissionReleaseFreesTheSlot(t *testing.T) {
	a := newAdmission(ConnectionLimits{Connections: 1, PerSource: 1})
	s, _ := admitOK(t, a, sourceA)
	establish(t, a, s)
	wantRefused(t, a, sourceA, RefusedPerSource)
	a.release(s)
	a.release(s) // a second close changes nothing
	wantCounts(t, a, 0, 0)
	if len(a.sources) != 0 {
		t.Fatalf("%d sources kept after their last connection closed", len(a.sources))
	}
	s2, _ := admitOK(t, a, sourceA)
	if a.established(s) {
		t.Fatal("a released slot became established")
	}
	establish(t, a, s2)
	wantCounts(t, a, 1, 0)
}

// A handshake budget that is full gives its oldest handshake's slot to the
// newcomer; established connections are never evicted.
func TestAdmissionEvictsTheOldestHandshake(t *testing.T) {
	t.Run("per source", func(t *testing.T) {
		a := newAdmission(ConnectionLimits{HandshakesPerSource: 2})
		first, _ := admitOK(t, a, sourceA)
		admitOK(t, a, sourceA)
		other, _ := admitOK(t, a, sourceB)
		_, evicted := admitOK(t, a, sourceA)
		if len(evicted) != 1 || evicted[0] != first {
			t.Fatalf("evicted %v, want A's oldest handshake", evicted)
		}
		if a.established(first) {
			t.Fatal("an evicted handshake became established")
		}
		establish(t, a, other)
		wantCounts(t, a, 3, 2)
	})
	t.Run("total", func(t *testing.T) {
		a := newAdmission(ConnectionLimits{Handshakes: 2})
		first, _ := admitOK(t, a, sourceA)
		admitOK(t, a, sourceB)
		_, evicted := admitOK(t, a, sourceC)
		if len(evicted) != 1 || evicted[0] != first {
			t.Fatalf("evicted %v, want the oldest handshake (A's)", evicted)
		}
		wantCounts(t, a, 2, 2)
	})
	t.Run("connections full of established and handshakes", func(t *testing.T) {
		a := newAdmission(ConnectionLimits{Connections: 3})
		e1, _ := admitOK(t, a, sourceA)
		pending, _ := admitOK(t, a, sourceB)
		e2, _ := admitOK(t, a, sourceC)
		establish(t, a, e1)
		establish(t, a, e2)
		_, evicted := admitOK(t, a, sourceC)
		if len(evicted) != 1 || evicted[0] != pending {
			t.Fatalf("evicted %v, want the only handshake", evicted)
		}
		wantCounts(t, a, 3, 1)
	})
	t.Run("source full of established and handshakes", func(t *testing.T) {
		a := newAdmission(ConnectionLimits{PerSource: 2})
		e, _ := admitOK(t, a, sourceA)
		establish(t, a, e)
		pending, _ := admitOK(t, a, sourceA)
		_, evicted := admitOK(t, a, sourceA)
		if len(evicted) != 1 || evicted[0] != pending {
			t.Fatalf("evicted %v, want A's handshake, not its established connection", evicted)
		}
		wantCounts(t, a, 2, 1)
	})
}

// No limit set: nothing is refused or evicted.
func TestAdmissionZeroLimitsBoundNothing(t *testing.T) {
	a := newAdmission(ConnectionLimits{})
	for range 1000 {
		if _, evicted := admitOK(t, a, sourceA); len(evicted) != 0 {
			t.Fatal("evicted without a limit")
		}
	}
	wantCounts(t, a, 1000, 1000)
}
