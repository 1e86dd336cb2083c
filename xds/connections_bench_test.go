package xds

import (
	"sync/atomic"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// BenchmarkSentAndACK is the callbacks' share of one SotW response and its
// ACK (what `tlsplane status` adds to: a clock read per response, no lock
// of its own); parallel, one stream per goroutine on the shared lock.
func BenchmarkSentAndACK(b *testing.B) {
	c := &callbacks{metrics: newMetrics(nil), streams: map[streamKey]*streamState{}}
	names, nonces, versions := []string{"shop/payments/8443"}, []string{"1", "2"}, []string{"v1", "v2"}
	var ids atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		key := streamKey{id: ids.Add(1)}
		c.open(key, peerIdentity{})
		for i := 0; pb.Next(); i++ {
			c.sent(key, resource.ClusterType, sentResponse{nonce: nonces[i%2], version: versions[i%2], resources: names})
			c.accepted(key, resource.ClusterType, nonces[i%2])
		}
	})
}
