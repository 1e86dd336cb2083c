package xds

import (
	"fmt"
	"strings"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

func TestTypeProgressStates(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	tests := []struct {
		name        string
		events      func(p *typeProgress)
		state       string
		behindSince time.Time
		nack        string
	}{
		{"asked, nothing sent", func(p *typeProgress) {}, NotSent, time.Time{}, ""},
		{"sent, no answer yet", func(p *typeProgress) { p.noteSent("v1", at(1)) }, Stale, at(1), ""},
		{"accepted", func(p *typeProgress) { p.noteSent("v1", at(1)); p.noteACK("v1") }, Synced, time.Time{}, ""},
		{"a newer version unanswered", func(p *typeProgress) {
			p.noteSent("v1", at(1))
			p.noteACK("v1")
			p.noteSent("v2", at(3))
		}, Stale, at(3), ""},
		{"rejected keeps when it fell behind", func(p *typeProgress) {
			p.noteSent("v1", at(1))
			p.noteACK("v1")
			p.noteSent("v2", at(3))
			p.noteNACK("v2", "malformed IP address: 999.0.0.1", at(4))
		}, NACKed, at(3), "malformed IP address: 999.0.0.1"},
		{"a fix sent after a NACK is still NACKED until accepted", func(p *typeProgress) {
			p.noteSent("v1", at(1))
			p.noteNACK("v1", "bad", at(2))
			p.noteSent("v2", at(3))
		}, NACKed, at(1), "bad"},
		{"a fix accepted keeps the last NACK", func(p *typeProgress) {
			p.noteSent("v1", at(1))
			p.noteNACK("v1", "bad", at(2))
			p.noteSent("v2", at(3))
			p.noteACK("v2")
		}, Synced, time.Time{}, "bad"},
		{"a delta stream resumed with the versions served", func(p *typeProgress) { p.resumed = true }, Synced, time.Time{}, ""},
		{"a delta stream resumed, then sent what changed", func(p *typeProgress) { p.resumed = true; p.noteSent("v2", at(1)) }, Stale, at(1), ""},
		{"an empty version accepted", func(p *typeProgress) { p.noteSent("", at(1)); p.noteACK("") }, Synced, time.Time{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &typeProgress{}
			tt.events(p)
			got := p.status(resource.ClusterType)
			if got.State != tt.state {
				t.Errorf("state = %s, want %s", got.State, tt.state)
			}
			if want := timeOrNil(tt.behindSince); (got.BehindSince == nil) != (want == nil) || (want != nil && !got.BehindSince.Equal(*want)) {
				t.Errorf("behindSince = %v, want %v", got.BehindSince, want)
			}
			if msg := ""; got.NACK != nil || tt.nack != "" {
				if got.NACK != nil {
					msg = got.NACK.Message
				}
				if msg != tt.nack {
					t.Errorf("NACK message = %q, want %q", msg, tt.nack)
				}
			}
		})
	}
}

func TestNACKMessageIsBounded(t *testing.T) {
	p := &typeProgress{}
	p.noteNACK("v1", strings.Repeat("é", maxNACKMessage), time.Now())
	if n := len(p.nack.Message); n > maxNACKMessage+len("…") {
		t.Errorf("kept %d bytes of the message, want at most %d", n, maxNACKMessage+len("…"))
	}
	if !strings.HasSuffix(p.nack.Message, "é…") {
		t.Errorf("message cut inside a rune: ...%q", p.nack.Message[len(p.nack.Message)-8:])
	}
}

// waitConnection polls Connections until node's entry satisfies ok.
func waitConnection(t *testing.T, h *harness, nodeID string, ok func(Connection) error) Connection {
	t.Helper()
	deadline := time.Now().Add(patience)
	var err error
	for time.Now().Before(deadline) {
		err = fmt.Errorf("node %q not connected", nodeID)
		for _, c := range h.server.Connections().Connections {
			if c.Node == nodeID {
				if err = ok(c); err == nil {
					return c
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("connection of %s: %v\n%+v", nodeID, err, h.server.Connections())
	return Connection{}
}

func typeState(c Connection, typeURL string) (TypeStatus, error) {
	for _, s := range c.Types {
		if s.TypeURL == typeURL {
			return s, nil
		}
	}
	return TypeStatus{}, fmt.Errorf("%s not listed", typeURL)
}

func wantState(typeURL, state string) func(Connection) error {
	return func(c Connection) error {
		s, err := typeState(c, typeURL)
		if err != nil {
			return err
		}
		if s.State != state {
			return fmt.Errorf("%s is %s, want %s", typeURL, s.State, state)
		}
		return nil
	}
}

func TestConnectionsSotwSyncedStaleNACKed(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments), true)
	s := openSotw(t, h)
	s.send(t, &discoveryv3.DiscoveryRequest{Node: node("envoy-1", "edge"), TypeUrl: resource.ClusterType})
	first := s.next(t)

	c := waitConnection(t, h, "envoy-1", wantState(resource.ClusterType, Stale))
	if c.Fleet != "edge" || c.API != "sotw" || !strings.HasPrefix(c.Peer, "127.0.0.1:") || c.Since.IsZero() {
		t.Errorf("connection = %+v, want fleet edge, sotw, a 127.0.0.1 peer and a time", c)
	}
	s.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resource.ClusterType, VersionInfo: first.GetVersionInfo(), ResponseNonce: first.GetNonce()})
	c = waitConnection(t, h, "envoy-1", wantState(resource.ClusterType, Synced))
	if cds, _ := typeState(c, resource.ClusterType); cds.Sent != first.GetVersionInfo() || cds.Acked != first.GetVersionInfo() || cds.BehindSince != nil {
		t.Errorf("CDS after the ACK = %+v, want sent = acked = %s", cds, first.GetVersionInfo())
	}

	bad := payments
	bad.SNI = "rejected.example"
	h.publish(t, st.Output(bad), true)
	rejected := s.next(t)
	s.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resource.ClusterType, VersionInfo: first.GetVersionInfo(), ResponseNonce: rejected.GetNonce(),
		ErrorDetail: &rpcstatus.Status{Code: 3, Message: "Error adding/updating cluster(s) shop/payments/8443: bad SNI"}})
	c = waitConnection(t, h, "envoy-1", wantState(resource.ClusterType, NACKed))
	cds, _ := typeState(c, resource.ClusterType)
	if cds.Sent != rejected.GetVersionInfo() || cds.Acked != first.GetVersionInfo() || cds.NACK == nil ||
		cds.NACK.Version != rejected.GetVersionInfo() || !strings.Contains(cds.NACK.Message, "bad SNI") || cds.BehindSince == nil {
		t.Errorf("CDS after the NACK = %+v (NACK %+v), want sent %s, acked %s, the message and when it fell behind", cds, cds.NACK, rejected.GetVersionInfo(), first.GetVersionInfo())
	}
}

func TestConnectionsDelta(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments, ledger), true)
	s := openDelta(t, h)
	cds, _, _ := s.initial(t, "envoy-2", "edge")
	c := waitConnection(t, h, "envoy-2", func(c Connection) error {
		for _, typeURL := range []string{resource.ClusterType, resource.EndpointType, resource.SecretType} {
			if err := wantState(typeURL, Synced)(c); err != nil {
				return err
			}
		}
		return nil
	})
	if c.API != "delta" || c.Fleet != "edge" {
		t.Errorf("connection = %+v, want delta in fleet edge", c)
	}
	if got, _ := typeState(c, resource.ClusterType); got.Acked != cds.GetSystemVersionInfo() {
		t.Errorf("CDS acked %q, want %q", got.Acked, cds.GetSystemVersionInfo())
	}
	// ADS order: clusters before endpoints before secrets.
	var order []string
	for _, s := range c.Types {
		order = append(order, s.TypeURL)
	}
	if want := []string{resource.ClusterType, resource.EndpointType, resource.SecretType}; strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("types = %v, want %v", order, want)
	}

	bad := payments
	bad.SNI = "rejected.example"
	h.publish(t, st.Output(bad, ledger), true)
	rejected := s.next(t)
	s.send(t, &discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType, ResponseNonce: rejected.GetNonce(),
		ErrorDetail: &rpcstatus.Status{Code: 3, Message: "Error adding/updating cluster(s) shop/payments/8443: bad SNI"}})
	c = waitConnection(t, h, "envoy-2", wantState(resource.ClusterType, NACKed))
	if got, _ := typeState(c, resource.ClusterType); got.NACK == nil || got.NACK.Version != rejected.GetSystemVersionInfo() {
		t.Errorf("CDS = %+v, want the NACK of %s", got, rejected.GetSystemVersionInfo())
	}

	s.stream.CloseSend()
	deadline := time.Now().Add(patience)
	for len(h.server.Connections().Connections) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(h.server.Connections().Connections); n != 0 {
		t.Errorf("%d connections listed after the stream ended", n)
	}
}

// A delta stream that resumes with the versions served is sent nothing
// for them: it holds them, SYNCED, not NOT SENT.
func TestConnectionsDeltaResumedInSync(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments), true)
	first := openDelta(t, h)
	_, eds, _ := first.initial(t, "envoy-1", "edge")
	names, versions := deltaNames(eds)

	again := openDelta(t, h)
	again.send(t, &discoveryv3.DeltaDiscoveryRequest{Node: node("envoy-2", "edge"), TypeUrl: resource.EndpointType,
		ResourceNamesSubscribe: names, InitialResourceVersions: versions})
	again.none(t)
	c := waitConnection(t, h, "envoy-2", wantState(resource.EndpointType, Synced))
	if eds, _ := typeState(c, resource.EndpointType); eds.Sent != "" || eds.BehindSince != nil {
		t.Errorf("EDS = %+v, want nothing sent", eds)
	}
}
