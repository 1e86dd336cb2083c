package snapshots

import (
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

// A Gateway fleet whose routes reach nothing is served no cluster, listed
// in --fleet-namespaces or not; under ScopeAll it is served what the
// namespaces (or, unlisted, every namespace) hold.
func TestGatewayFleetReachingNothingIsServedNoCluster(t *testing.T) {
	out := st.WithGateways(st.Output(payments, ledger), edge)
	out.Fleets[edge.Fleet()].Reached = nil
	out.Fleets[edge.Fleet()].Routes = nil
	out.Fleets[edge.Fleet()].Listeners = nil
	out.Fleets[edge.Fleet()].Secrets = nil
	for _, tc := range []struct {
		name  string
		opts  Options
		wantN int
	}{
		{"reached", Options{}, 0},
		{"reached, listed", Options{FleetNamespaces: map[string][]string{edge.Fleet(): {"shop"}}}, 0},
		{"all", Options{Scope: ScopeAll}, 2},
		{"all, listed", Options{Scope: ScopeAll, FleetNamespaces: map[string][]string{edge.Fleet(): {"shop"}}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(tc.opts)
			p.NodeStreamOpened(&corev3.Node{Id: "gw", Cluster: edge.Fleet()})
			if _, err := p.Publish(out); err != nil {
				t.Fatal(err)
			}
			if got := sortedNames(served(t, p, edge.Fleet()).GetResources(resource.ClusterType)); len(got) != tc.wantN {
				t.Errorf("served clusters %v, want %d", got, tc.wantN)
			}
		})
	}
}
