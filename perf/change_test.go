package perf

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
)

// BenchmarkChangeToSnapshot is BenchmarkEditToSnapshot for the other
// changes issue 15 names, each among n Services: one EndpointSlice's
// address moves (endpoints), or, behind one Gateway with an HTTPRoute per
// Service, one route's path changes (route). The Gateway's fleet and an
// unrestricted one are connected.
func BenchmarkChangeToSnapshot(b *testing.B) {
	for _, n := range editSizes() {
		b.Run(fmt.Sprintf("endpoints/n=%d", n), func(b *testing.B) {
			in := Inputs(n)
			es := in.EndpointSlices[n/2]
			benchmarkChange(b, in, func(rv int) translator.Change {
				es = MovedEndpoints(es, rv)
				return changeOf(translator.KindEndpointSlice, es)
			})
		})
		b.Run(fmt.Sprintf("route/n=%d", n), func(b *testing.B) {
			in := GatewayInputs(n)
			r := in.HTTPRoutes[n/2]
			benchmarkChange(b, in, func(rv int) translator.Change {
				r = Route(r.Namespace, r.Name, fmt.Sprintf("/v%d", rv))
				return changeOf(translator.KindHTTPRoute, r)
			})
		})
		b.Run(fmt.Sprintf("grpcroute/n=%d", n), func(b *testing.B) {
			in := GRPCGatewayInputs(n)
			r := in.GRPCRoutes[n/2]
			benchmarkChange(b, in, func(rv int) translator.Change {
				r = GRPCRoute(r.Namespace, r.Name, fmt.Sprintf("Echo%d", rv))
				return changeOf(translator.KindGRPCRoute, r)
			})
		})
		// The same two changes when the Gateway presents a backend client
		// certificate: its fleet has its own version of every cluster.
		b.Run(fmt.Sprintf("endpoints-gateway-client-certificate/n=%d", n), func(b *testing.B) {
			in := WithBackendClientCertificate(b, GatewayInputs(n))
			es := in.EndpointSlices[n/2]
			benchmarkChange(b, in, func(rv int) translator.Change {
				es = MovedEndpoints(es, rv)
				return changeOf(translator.KindEndpointSlice, es)
			})
		})
		b.Run(fmt.Sprintf("route-gateway-client-certificate/n=%d", n), func(b *testing.B) {
			in := WithBackendClientCertificate(b, GatewayInputs(n))
			r := in.HTTPRoutes[n/2]
			benchmarkChange(b, in, func(rv int) translator.Change {
				r = Route(r.Namespace, r.Name, fmt.Sprintf("/v%d", rv))
				return changeOf(translator.KindHTTPRoute, r)
			})
		})
	}
}

func changeOf(kind translator.Kind, obj metav1.Object) translator.Change {
	return translator.Change{Kind: kind, Key: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}, Object: obj}
}

// benchmarkChange: an operation is next's change, Update, then Publish,
// with the Gateway's fleet and an unrestricted one connected.
func benchmarkChange(b *testing.B, in translator.Inputs, next func(rv int) translator.Change) {
	benchmarkChangeFor(b, []string{"mesh", "edge/web"}, in, next)
}

// benchmarkChangeFor is benchmarkChange with fleets connected.
func benchmarkChangeFor(b *testing.B, fleets []string, in translator.Inputs, next func(rv int) translator.Change) {
	tr := translator.New()
	pub := snapshots.New(snapshots.Options{})
	for _, fleet := range fleets {
		pub.NodeStreamOpened(&corev3.Node{Id: fleet, Cluster: fleet})
	}
	out := tr.Translate(in, nil, benchNow, translator.Options{})
	if _, err := pub.Publish(out); err != nil {
		b.Fatal(err)
	}
	var translating, publishing time.Duration
	rv := 1
	// The first change after a whole translation also builds what Update
	// keeps (once): reported apart, as first-change-ns.
	rv++
	first := time.Now()
	out, ok := tr.Update([]translator.Change{next(rv)}, translator.PreviousStatus(out.Statuses), benchNow, translator.Options{})
	if !ok {
		b.Fatal("Update refused the first change")
	}
	if _, err := pub.Publish(out); err != nil {
		b.Fatal(err)
	}
	firstChange := time.Since(first)
	runtime.GC()
	b.ReportAllocs()
	for b.Loop() {
		rv++
		change := next(rv)
		start := time.Now()
		updated, ok := tr.Update([]translator.Change{change}, translator.PreviousStatus(out.Statuses), benchNow, translator.Options{})
		if !ok {
			b.Fatal("Update refused the change")
		}
		out = updated
		mid := time.Now()
		changed, err := pub.Publish(out)
		translating += mid.Sub(start)
		publishing += time.Since(mid)
		if err != nil || !changed {
			b.Fatalf("Publish: changed=%v, %v", changed, err)
		}
	}
	b.ReportMetric(float64(translating.Nanoseconds())/float64(b.N), "translate-ns/op")
	b.ReportMetric(float64(publishing.Nanoseconds())/float64(b.N), "publish-ns/op")
	b.ReportMetric(float64(firstChange.Nanoseconds()), "first-change-ns")
}
