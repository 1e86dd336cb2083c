package xds

import (
	"slices"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

func TestImplicatedNarrowsToNamedResources(t *testing.T) {
	resources := []string{"shop/pay/80", "shop/pay/8080", "bank/ledger/443"}
	for message, want := range map[string][]string{
		"Error adding/updating cluster(s) shop/pay/8080: bad SNI":        {"shop/pay/8080"},
		"cluster shop/pay/80 and bank/ledger/443 rejected.":              {"shop/pay/80", "bank/ledger/443"},
		"Proto constraint validation failed (ClusterValidationError...)": resources,
		"shop/pay/80/extra is not ours":                                  resources,
	} {
		if got := implicated(resources, nil, message); !slices.Equal(got, want) {
			t.Errorf("%q: got %v, want %v", message, got, want)
		}
	}
	// A message naming none implicates what changed since the last ACK.
	changed := []string{"bank/ledger/443"}
	if got := implicated(resources, changed, "malformed IP address: 999.0.0.1"); !slices.Equal(got, changed) {
		t.Errorf("unnamed, with changes: got %v, want %v", got, changed)
	}
	if got := implicated(resources, changed, "cluster shop/pay/80 rejected"); !slices.Equal(got, []string{"shop/pay/80"}) {
		t.Errorf("named: got %v, want the named one", got)
	}
}

// Envoy's EDS and SDS errors name no resource: the NACK implicates the
// resources changed since the version Envoy last accepted.
func TestSotwNACKImplicatesChangedResources(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments, ledger), true)
	eds := connectSotw(t, h, node("envoy-1", "edge"), resource.EndpointType)
	eds.fetch(t)
	eds.ack(t)

	moved := ledger
	moved.Address = "999.0.0.1"
	h.publish(t, st.Output(payments, moved), true)
	wantNames(t, "EDS", eds.fetch(t), "bank/ledger/443") // only what changed
	if err := eds.client.Nack("malformed IP address: 999.0.0.1"); err != nil {
		t.Fatal(err)
	}
	nack := h.expectNACK(t)
	wantNames(t, "rejected resources", nack.Resources, "bank/ledger/443")
	if len(nack.Policies) != 1 || nack.Policies[0] != ledger.Policy() {
		t.Errorf("policies = %v, want [%v]", nack.Policies, ledger.Policy())
	}
}

func TestNACKReportedOncePerNodeTypeVersion(t *testing.T) {
	var got []NACK
	r := &nackReporter{
		log: discard(), metrics: newMetrics(nil), seen: map[nackKey]bool{},
		origins: func([]string) []types.NamespacedName { return nil },
		onNACK:  func(n NACK) { got = append(got, n) },
	}
	n := NACK{NodeID: "a", TypeURL: resource.ClusterType, Version: "v1", Nonce: "1"}
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
	if c := counterValue(t, r.metrics.nacks.WithLabelValues(resource.ClusterType)); c != 4 {
		t.Errorf("counter = %v, want every NACK counted (4)", c)
	}
}

// A listener or route configuration may bear a cluster's name (Gateway
// shop/pay's listener on port 443 and Service shop/pay's cluster are both
// shop/pay/443): its NACK is no policy's.
func TestListenerNACKIsNoPolicys(t *testing.T) {
	var got []NACK
	r := &nackReporter{
		log: discard(), metrics: newMetrics(nil), seen: map[nackKey]bool{},
		origins: func([]string) []types.NamespacedName { return []types.NamespacedName{{Namespace: "shop", Name: "pay"}} },
		onNACK:  func(n NACK) { got = append(got, n) },
	}
	for i, typeURL := range []string{resource.ListenerType, resource.RouteType, resource.ClusterType} {
		r.report(NACK{NodeID: "a", TypeURL: typeURL, Version: "v1", Resources: []string{"shop/pay/443"}, Message: "shop/pay/443: rejected"})
		if want := typeURL == resource.ClusterType; (len(got[i].Policies) > 0) != want {
			t.Errorf("%s NACK of shop/pay/443: policies %v, want some: %v", typeURL, got[i].Policies, want)
		}
	}
}
