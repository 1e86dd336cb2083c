package statuswriter

import (
	"fmt"
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
	gwlisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// listerCache is a Cache over client-go listers, read at the informers'
// cost; it holds policies and HTTPRoutes.
type listerCache struct {
	apiCache
	policies gwlisters.BackendTLSPolicyLister
	routes   gwlisters.HTTPRouteLister
}

func (l listerCache) Policy(nn types.NamespacedName) (*gwv1.BackendTLSPolicy, bool) {
	p, err := l.policies.BackendTLSPolicies(nn.Namespace).Get(nn.Name)
	return p, err == nil
}

func (l listerCache) Route(kind translator.Kind, nn types.NamespacedName) (runtime.Object, bool) {
	if kind != translator.KindHTTPRoute {
		return l.apiCache.Route(kind, nn)
	}
	r, err := l.routes.HTTPRoutes(nn.Namespace).Get(nn.Name)
	return r, err == nil
}

func benchPolicyStatus(i int, reason string) gwv1.PolicyStatus {
	return gwv1.PolicyStatus{Ancestors: []gwv1.PolicyAncestorStatus{{
		AncestorRef:    gwv1.ParentReference{Name: gwv1.ObjectName(fmt.Sprintf("svc-%05d", i))},
		ControllerName: me,
		Conditions: []metav1.Condition{
			{Type: "Accepted", Status: metav1.ConditionTrue, Reason: reason, ObservedGeneration: 1, LastTransitionTime: t0},
			{Type: "ResolvedRefs", Status: metav1.ConditionTrue, Reason: "ResolvedRefs", ObservedGeneration: 1, LastTransitionTime: t0},
		},
	}}}
}

// leadingWriter is a writer in a term of leadership whose queue is never
// drained: the benchmarks time Report, not the writes.
func leadingWriter(b *testing.B, c Cache) *Writer {
	w, err := New(Options{Gateway: gwfake.NewSimpleClientset(), Controller: me, Cache: c})
	if err != nil {
		b.Fatal(err)
	}
	w.queue = workqueue.NewTypedRateLimitingQueue(w.opts.RateLimiter)
	b.Cleanup(w.queue.ShutDown)
	return w
}

// BenchmarkReportOneChangeAmong10000Policies is one pass of the pipeline
// in which one status of 10,000 changed: the translator hands a new map
// whose other entries are the values of the last one.
func BenchmarkReportOneChangeAmong10000Policies(b *testing.B) {
	const n = 10000
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	before := make(map[types.NamespacedName]gwv1.PolicyStatus, n)
	for i := range n {
		nn := types.NamespacedName{Namespace: "shop", Name: fmt.Sprintf("p-%05d", i)}
		before[nn] = benchPolicyStatus(i, "Accepted")
		if err := idx.Add(&gwv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: nn.Namespace, Name: nn.Name}, Status: before[nn]}); err != nil {
			b.Fatal(err)
		}
	}
	after := maps.Clone(before)
	after[types.NamespacedName{Namespace: "shop", Name: "p-00042"}] = benchPolicyStatus(42, "Changed")
	w := leadingWriter(b, listerCache{policies: gwlisters.NewBackendTLSPolicyLister(idx)})
	w.Report(before)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			w.Report(after)
		} else {
			w.Report(before)
		}
	}
}

// BenchmarkReportGatewayAPIOneChangeAmong10000Routes is the same for
// 10,000 HTTPRoutes behind one Gateway.
func BenchmarkReportGatewayAPIOneChangeAmong10000Routes(b *testing.B) {
	const n = 10000
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	routes := make(map[types.NamespacedName]gwv1.HTTPRouteStatus, n)
	for i := range n {
		nn := types.NamespacedName{Namespace: "shop", Name: fmt.Sprintf("r-%05d", i)}
		st := gwv1.HTTPRouteStatus{RouteStatus: gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{parent(me, "web", "Accepted")}}}
		routes[nn] = st
		if err := idx.Add(&gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: nn.Namespace, Name: nn.Name}, Status: st}); err != nil {
			b.Fatal(err)
		}
	}
	gateways := map[types.NamespacedName]gwv1.GatewayStatus{webGW: {Conditions: accepted("Accepted")}}
	before := translator.GatewayAPIStatuses{Gateways: gateways, RouteStatusMaps: translator.RouteStatusMaps{HTTPRoutes: routes}}
	after := before
	after.HTTPRoutes = maps.Clone(routes)
	after.HTTPRoutes[types.NamespacedName{Namespace: "shop", Name: "r-00042"}] = gwv1.HTTPRouteStatus{RouteStatus: gwv1.RouteStatus{
		Parents: []gwv1.RouteParentStatus{parent(me, "web", "Changed")}}}
	w := leadingWriter(b, listerCache{apiCache: apiCache{gwfake.NewSimpleClientset()}, routes: gwlisters.NewHTTPRouteLister(idx)})
	w.ReportGatewayAPI(before)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			w.ReportGatewayAPI(after)
		} else {
			w.ReportGatewayAPI(before)
		}
	}
}
