package xds

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestImplicatedNarrowsToNamedResources(t *testing.T) {
	resources := []string{"shop/pay/80", "shop/pay/8080", "bank/ledger/443"}
	for message, want := range map[string][]string{
		"Error adding/updating cluster(s) shop/pay/8080: bad SNI":        {"shop/pay/8080"},
		"cluster shop/pay/80 and bank/ledger/443 rejected.":              {"shop/pay/80", "bank/ledger/443"},
		"Proto constraint validation failed (ClusterValidationError...)": resources,
		"shop/pay/80/extra is not ours":                                  resources,
	} {
		if got := implicated(resources, message); !slices.Equal(got, want) {
			t.Errorf("%q: got %v, want %v", message, got, want)
		}
	}
}

func TestNACKReportedOncePerNodeTypeVersion(t *testing.T) {
	var got []NACK
	r := &nackReporter{
		log: discard(), metrics: newMetrics(nil), seen: map[nackKey]bool{},
		origins: func([]string) []types.NamespacedName { return nil },
		onNACK:  func(n NACK) { got = append(got, n) },
	}
	n := NACK{NodeID: "a", TypeURL: "cds", Version: "v1", Nonce: "1"}
	r.report(n)
	n.Nonce = "2"
	r.report(n) // same version after a reconnect
	n.Version = "v2"
	r.report(n)
	n.NodeID = "b"
	r.report(n)
	if len(got) != 3 {
		t.Fatalf("reported %d times, want 3: %+v", len(got), got)
	}
	if c := counterValue(t, r.metrics.nacks.WithLabelValues("cds")); c != 4 {
		t.Errorf("counter = %v, want every NACK counted (4)", c)
	}
}
