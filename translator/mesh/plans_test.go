package mesh

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
)

// listenerRoutes is, per listener of f, the route names it serves, or
// "tcp:<cluster>" for a listener straight to its cluster.
func listenerRoutes(f *Fleet) map[string]string {
	out := map[string]string{}
	for _, l := range f.Listeners {
		if !l.Captured {
			out[l.Name] = "bound to a socket"
			continue
		}
		if l.HTTP == nil {
			out[l.Name] = "tcp:" + l.Streams[0].Backends[0].Cluster
			continue
		}
		var names []string
		for _, r := range l.HTTP.VirtualHosts[0].Routes {
			names = append(names, r.Name)
		}
		out[l.Name] = strings.Join(names, ",")
	}
	return out
}

// TestFleetsApplyProducerAndConsumerRoutes: every member namespace's
// fleet has a listener per capturable TCP Service port of the mesh; a
// consumer route replaces the producer route for its namespace only; a
// port no route applies to goes to its cluster.
func TestFleetsApplyProducerAndConsumerRoutes(t *testing.T) {
	namespaces, ix := world()
	routes := []*gwv1.HTTPRoute{
		httpRoute("shop", "producer", serviceRef("", "echo", ptr(gwv1.PortNumber(80)), "")),
		httpRoute("caller", "consumer", serviceRef("shop", "echo", ptr(gwv1.PortNumber(80)), "")),
	}
	res := Judge(Routes{HTTP: routes}, ix, DefaultSelector.MembersOf(namespaces), DefaultSelector, ours, stamp)
	fleets, warnings := Fleets(res, ix)
	if len(warnings) > 0 {
		t.Errorf("warnings: %v", warnings)
	}
	var names []string
	for _, f := range fleets {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{"Mesh/caller", "Mesh/shop"}) {
		t.Fatalf("fleets %v, want Mesh/caller, Mesh/shop", names)
	}
	want := map[string]map[string]string{
		"Mesh/caller": {
			"Mesh/shop/echo/80":   "caller/consumer/rule/0/match/0",
			"Mesh/shop/echo/8080": "tcp:shop/echo/8080",
		},
		"Mesh/shop": {
			"Mesh/shop/echo/80":   "shop/producer/rule/0/match/0",
			"Mesh/shop/echo/8080": "tcp:shop/echo/8080",
		},
	}
	for _, f := range fleets {
		got := listenerRoutes(f)
		if !mapsEqual(got, want[f.Name]) {
			t.Errorf("%s: listeners %v, want %v", f.Name, got, want[f.Name])
		}
		if !slices.Equal(f.Reached, []string{"shop/echo/80", "shop/echo/8080"}) {
			t.Errorf("%s: reached %v", f.Name, f.Reached)
		}
		for _, l := range f.Listeners {
			if l.Address != "10.96.0.10" {
				t.Errorf("%s: listener %s on %s, want the cluster IP", f.Name, l.Name, l.Address)
			}
			if l.HTTP != nil && (l.HTTP.VirtualHosts[0].Hostname != "*" || l.HTTP.Name != l.Name) {
				t.Errorf("%s: route table %s, host %q", f.Name, l.HTTP.Name, l.HTTP.VirtualHosts[0].Hostname)
			}
		}
	}
}

// TestDestinationsSharingAnAddress: manifests can give two Services one
// cluster IP; the older keeps the port and the other is named in a
// warning, not given a second listener Envoy would refuse.
func TestDestinationsSharingAnAddress(t *testing.T) {
	old := service("shop", "zeta", "10.96.0.5", tcp("http", 80))
	old.CreationTimestamp = metav1.Date(2025, 1, 1, 0, 0, 0, 0, stamp.Location())
	young := service("shop", "alpha", "10.96.0.5", tcp("http", 80), tcp("alt", 81))
	young.CreationTimestamp = metav1.Date(2026, 1, 1, 0, 0, 0, 0, stamp.Location())
	twin := service("shop", "twin", "10.96.0.6", tcp("http", 80), tcp("again", 80))
	ix := input.NewIndex(input.Inputs{Services: []*corev1.Service{young, old, twin}})
	dests, warnings := destinations(Members{"shop": true}, ix)
	var got []string
	for _, d := range dests {
		got = append(got, d.cluster+"@"+d.address)
	}
	want := []string{"shop/alpha/81@10.96.0.5", "shop/twin/80@10.96.0.6", "shop/zeta/80@10.96.0.5"}
	if !slices.Equal(got, want) {
		t.Errorf("destinations %v, want %v", got, want)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "Service shop/alpha port 80") || !strings.Contains(warnings[0], "shop/zeta") || !strings.Contains(warnings[0], "10.96.0.5:80") {
		t.Errorf("warnings %q, want one naming shop/alpha port 80, shop/zeta and 10.96.0.5:80", warnings)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
