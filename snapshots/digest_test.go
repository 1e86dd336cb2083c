package snapshots

import (
	"testing"

	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

func TestDigestsReuseAPointerAndForgetWhatTwoPublishesDidNotUse(t *testing.T) {
	d := newDigests()
	c := st.Cluster(payments)
	first, err := d.of(c)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := d.of(c); again != first {
		t.Error("the same pointer was digested twice")
	}
	if len(first.secrets) != 1 || first.secrets[0] != payments.SecretName() {
		t.Errorf("secrets = %v, want [%s]", first.secrets, payments.SecretName())
	}
	// Equal content behind another pointer: a new digest, the same hash.
	twin, _ := d.of(st.Cluster(payments))
	if twin == first || twin.wire != first.wire {
		t.Errorf("twin: same digest %v, wire %s vs %s", twin == first, twin.wire, first.wire)
	}

	d.rotate() // the publish after: c still used
	if kept, _ := d.of(c); kept != first {
		t.Error("a digest used by the previous publish was recomputed")
	}
	d.rotate()
	d.rotate() // two publishes without c
	if len(d.prev) != 0 || len(d.cur) != 0 {
		t.Errorf("kept %d+%d digests of resources no publish used", len(d.prev), len(d.cur))
	}
}
