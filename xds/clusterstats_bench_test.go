package xds

import (
	"fmt"
	"testing"

	prommodel "github.com/prometheus/client_model/go"
)

// BenchmarkClusterCounters is the metrics service's decoding of one
// Envoy's flush at 10,000 clusters, the six counters each (what the
// example's stats matcher lets through). One op is one report.
func BenchmarkClusterCounters(b *testing.B) {
	var families []*prommodel.MetricFamily
	for i := range 10_000 {
		for _, c := range ReadCounters {
			families = append(families, counterFamily(fmt.Sprintf("cluster.ns%d/svc/443.%s", i, c), float64(i)))
		}
	}
	b.ResetTimer()
	for range b.N {
		if got, _ := clusterCounters(families); len(got) != 10_000 {
			b.Fatalf("%d clusters", len(got))
		}
	}
}
