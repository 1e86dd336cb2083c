package perf

import (
	"fmt"
	"testing"

	"github.com/tlsplane/tlsplane/translator"
)

// BenchmarkMeshChange is BenchmarkChangeToSnapshot in a mesh (issue 39's
// costs): MeshInputs(n), every mesh fleet connected, and an operation is
// one producer route's path changing, which every fleet's listener for
// that Service port carries.
func BenchmarkMeshChange(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("route/n=%d", n), func(b *testing.B) {
			in := MeshInputs(n)
			var fleets []string
			for i := range meshNamespaces {
				fleets = append(fleets, MeshFleetOf(i))
			}
			r := in.HTTPRoutes[n/2]
			benchmarkChangeFor(b, fleets, in, func(rv int) translator.Change {
				r = MeshRoute(r.Namespace, r.Name, fmt.Sprintf("/v%d", rv))
				return changeOf(translator.KindHTTPRoute, r)
			})
		})
	}
}
