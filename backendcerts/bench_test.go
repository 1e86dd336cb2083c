package backendcerts

import (
	"fmt"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// BenchmarkApply is the inventory's cost per pipeline pass at the issue's
// scale: 10,000 policies, each governing one cluster with one backend
// host seen (10,000 entries, the default bound), and 1,000 sightings
// between passes. One op is the sightings and one pass.
func BenchmarkApply(b *testing.B) {
	const n = 10_000
	origins := make(map[string][]types.NamespacedName, n)
	statuses := make(map[types.NamespacedName]gwv1.PolicyStatus, n)
	clusters := make([]*clusterv3.Cluster, n)
	sightings := make([]Sighting, n)
	base := statuses4(pay)
	for i := range n {
		name := fmt.Sprintf("ns%d/svc/443", i)
		p := types.NamespacedName{Namespace: fmt.Sprintf("ns%d", i), Name: "tls"}
		origins[name], statuses[p] = []types.NamespacedName{p}, base
		clusters[i] = cluster(b, name, tlsv3.TlsParameters_TLSv1_3)
		sightings[i] = sighting(fmt.Sprintf("10.0.%d.%d:8443", i>>8, i&255), time.Duration(i+1)*time.Hour*24, "TLSv1.3")
		sightings[i].Cluster = name
	}
	c := &clock{now: t0}
	inv := New(Options{Now: c.Now})
	inv.SeeClusters(clusters)
	for _, s := range sightings {
		inv.Record(s)
	}
	inv.Apply(statuses, origins, nil, "", t0)
	b.ResetTimer()
	for i := range b.N {
		c.advance(time.Second)
		for j := range 1000 {
			inv.Record(sightings[(i*1000+j)%n])
		}
		inv.Apply(statuses, origins, nil, "", c.now)
	}
}

func statuses4(p types.NamespacedName) gwv1.PolicyStatus { return statuses(p)[p] }
