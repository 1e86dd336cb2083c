package translator_test

import (
	"slices"
	"testing"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
)

// checkScopes: under ScopeReached a Gateway fleet's feed serves only the
// clusters its routes reach, and the fleet with no Gateway and no
// namespace grant ("mesh") no secret but trust material, whatever
// sequence of patches brought the publisher there.
func (f feeds) checkScopes(t *testing.T, step int, out translator.Output) {
	t.Helper()
	if f.scope != snapshots.ScopeReached {
		return
	}
	for _, fleet := range f.fleets {
		own := out.Fleets[fleet]
		feed := f.pub.Feed(fleet)
		if own != nil {
			feed.Read(resource.ClusterType, func(v snapshots.FeedView) {
				v.Each(func(e *snapshots.FeedEntry) {
					if _, found := slices.BinarySearch(own.Reached, e.Name); !found {
						t.Fatalf("step %d: Gateway fleet %s is served cluster %s, which its routes do not reach (%q)", step, fleet, e.Name, own.Reached)
					}
				})
			})
		}
		if fleet != "mesh" {
			continue
		}
		feed.Read(resource.SecretType, func(v snapshots.FeedView) {
			v.Each(func(e *snapshots.FeedEntry) {
				if s, ok := e.Resource.(*tlsv3.Secret); !ok || s.GetValidationContext() == nil {
					t.Fatalf("step %d: fleet mesh (no Gateway, no grant) is served secret %s, which holds a key", step, e.Name)
				}
			})
		})
	}
}
