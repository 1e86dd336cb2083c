package handshakes

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// BenchmarkStatsFlush is the tracker's added cost per stats flush at the
// issue's scale: 100 Envoys of one fleet each report 10,000 clusters (the
// six counters, handshakes and connect failures moving), then the
// pipeline applies the conditions to 10,000 policies. One op is one flush.
func BenchmarkStatsFlush(b *testing.B) {
	const clusters, envoys = 10_000, 100
	names := make([]string, clusters)
	origins := make(map[string][]types.NamespacedName, clusters)
	statuses := make(map[types.NamespacedName]gwv1.PolicyStatus, clusters)
	for i := range names {
		names[i] = fmt.Sprintf("ns%d/svc/443", i)
		p := types.NamespacedName{Namespace: fmt.Sprintf("ns%d", i), Name: "tls"}
		origins[names[i]] = []types.NamespacedName{p}
		statuses[p] = statuses4(p)
	}
	c := &clock{now: t0}
	tr := New(Options{Window: 5 * time.Minute, Now: c.Now})
	tr.Apply(statuses, origins, nil, "", t0)
	report := func(node string, flush uint64) Report {
		r := Report{Node: node, Fleet: "edge", Counters: make(map[string]map[string]uint64, clusters)}
		for _, n := range names {
			r.Counters[n] = map[string]uint64{
				counterHandshake: 10 * flush, counterConnectFailed: flush,
				counterVerifyError: 0, counterVerifySAN: 0, counterVerifyHash: 0, counterConnError: 0,
			}
		}
		return r
	}
	// Reports are built beforehand: decoding is the xDS server's cost.
	reports := make([][]Report, 2)
	for f := range reports {
		for e := range envoys {
			reports[f] = append(reports[f], report(fmt.Sprintf("envoy-%d", e), uint64(f+1)))
		}
	}
	for _, r := range reports[0] {
		tr.Record(r) // baselines
	}
	b.ResetTimer()
	for i := range b.N {
		c.advance(5 * time.Second)
		for _, r := range reports[1+i%1] {
			tr.Record(r)
		}
		tr.Apply(statuses, origins, nil, "", t0)
	}
}

func statuses4(p types.NamespacedName) gwv1.PolicyStatus { return statuses(p)[p] }
