package statuswriter

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/tlsplane/tlsplane/translator"
)

// apiCache reads the fake API server, standing in for the informers.
type apiCache struct{ c *gwfake.Clientset }

func (a apiCache) Policy(nn types.NamespacedName) (*gwv1.BackendTLSPolicy, bool) {
	p, err := a.c.GatewayV1().BackendTLSPolicies(nn.Namespace).Get(context.Background(), nn.Name, metav1.GetOptions{})
	return p, err == nil
}
func (a apiCache) GatewayClass(name string) (*gwv1.GatewayClass, bool) {
	o, err := a.c.GatewayV1().GatewayClasses().Get(context.Background(), name, metav1.GetOptions{})
	return o, err == nil
}
func (a apiCache) Gateway(nn types.NamespacedName) (*gwv1.Gateway, bool) {
	o, err := a.c.GatewayV1().Gateways(nn.Namespace).Get(context.Background(), nn.Name, metav1.GetOptions{})
	return o, err == nil
}
func (a apiCache) ListenerSet(nn types.NamespacedName) (*gwv1.ListenerSet, bool) {
	o, err := a.c.GatewayV1().ListenerSets(nn.Namespace).Get(context.Background(), nn.Name, metav1.GetOptions{})
	return o, err == nil
}
func (a apiCache) Route(kind translator.Kind, nn types.NamespacedName) (runtime.Object, bool) {
	rk, ok := translator.RouteKindOf(kind)
	if !ok {
		return nil, false
	}
	r, err := routeClientOf(a.c.GatewayV1(), rk, nn.Namespace).get(context.Background(), nn.Name)
	return r, err == nil
}

func (a apiCache) XBackend(nn types.NamespacedName) (*gwxv1a1.XBackend, bool) {
	o, err := a.c.ExperimentalV1alpha1().XBackends(nn.Namespace).Get(context.Background(), nn.Name, metav1.GetOptions{})
	return o, err == nil
}
func (a apiCache) XBackendTrafficPolicy(nn types.NamespacedName) (*gwxv1a1.XBackendTrafficPolicy, bool) {
	o, err := a.c.ExperimentalV1alpha1().XBackendTrafficPolicies(nn.Namespace).Get(context.Background(), nn.Name, metav1.GetOptions{})
	return o, err == nil
}
func (a apiCache) XMesh(name string) (*gwxv1a1.XMesh, bool) {
	o, err := a.c.ExperimentalV1alpha1().XMeshes().Get(context.Background(), name, metav1.GetOptions{})
	return o, err == nil
}

var (
	webGW   = types.NamespacedName{Namespace: "edge", Name: "web"}
	teamLS  = types.NamespacedName{Namespace: "team", Name: "extra"}
	shopRT  = types.NamespacedName{Namespace: "edge", Name: "shop"}
	t0      = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	otherCn = gwv1.GatewayController("example.com/other")
)

func accepted(reason string) []metav1.Condition {
	return []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: reason, LastTransitionTime: t0}}
}

func parent(controller gwv1.GatewayController, gateway, reason string) gwv1.RouteParentStatus {
	return gwv1.RouteParentStatus{ParentRef: gwv1.ParentReference{Name: gwv1.ObjectName(gateway)}, ControllerName: controller, Conditions: accepted(reason)}
}

// desiredStatuses has an HTTPRoute, a GRPCRoute, a TLSRoute and a TCPRoute
// of one name, edge/shop: a route kind's status is its own.
func desiredStatuses(routeReason string) translator.GatewayAPIStatuses {
	addr := gwv1.IPAddressType
	return translator.GatewayAPIStatuses{
		GatewayClasses: map[string]gwv1.GatewayClassStatus{"tlsplane": {Conditions: accepted("Accepted"),
			SupportedFeatures: []gwv1.SupportedFeature{{Name: "HTTPRoute"}}}},
		Gateways: map[types.NamespacedName]gwv1.GatewayStatus{webGW: {
			Addresses:  []gwv1.GatewayStatusAddress{{Type: &addr, Value: "10.0.0.7"}},
			Conditions: accepted("Accepted"),
			Listeners:  []gwv1.ListenerStatus{{Name: "http", AttachedRoutes: 1, SupportedKinds: []gwv1.RouteGroupKind{{Kind: "HTTPRoute"}}, Conditions: accepted("Accepted")}},
		}},
		ListenerSets: map[types.NamespacedName]gwv1.ListenerSetStatus{teamLS: {
			Conditions: accepted("Accepted"),
			Listeners:  []gwv1.ListenerEntryStatus{{Name: "extra", SupportedKinds: []gwv1.RouteGroupKind{{Kind: "HTTPRoute"}}, Conditions: accepted("Accepted")}},
		}},
		RouteStatusMaps: translator.RouteStatusMaps{
			HTTPRoutes: map[types.NamespacedName]gwv1.HTTPRouteStatus{shopRT: {RouteStatus: gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{
				// The translator's copy of another controller's entry may be
				// stale: the live one must win.
				parent(otherCn, "theirs", "Stale"),
				parent(me, "web", routeReason),
			}}}},
			GRPCRoutes: map[types.NamespacedName]gwv1.GRPCRouteStatus{shopRT: {RouteStatus: gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{
				parent(otherCn, "theirs", "Stale"),
				parent(me, "web", "gRPC"+routeReason),
			}}}},
			TLSRoutes: map[types.NamespacedName]gwv1.TLSRouteStatus{shopRT: {RouteStatus: gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{
				parent(otherCn, "theirs", "Stale"),
				parent(me, "web", "TLS"+routeReason),
			}}}},
			TCPRoutes: map[types.NamespacedName]gwv1.TCPRouteStatus{shopRT: {RouteStatus: gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{
				parent(otherCn, "theirs", "Stale"),
				parent(me, "web", "TCP"+routeReason),
			}}}},
		},
	}
}

// gatewayAPIFixture creates the objects through the client: the fake
// tracker does not list a Gateway handed to its constructor.
func gatewayAPIFixture(t *testing.T) *gwfake.Clientset {
	t.Helper()
	ctx := context.Background()
	c := gwfake.NewSimpleClientset()
	if _, err := c.GatewayV1().GatewayClasses().Create(ctx, &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "tlsplane"},
		Spec: gwv1.GatewayClassSpec{ControllerName: me}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GatewayV1().Gateways("edge").Create(ctx, &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "web"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GatewayV1().ListenerSets("team").Create(ctx, &gwv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "extra"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Each route kind's edge/shop, with the other controller's live entry.
	shop := metav1.ObjectMeta{Namespace: "edge", Name: "shop"}
	live := gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{parent(otherCn, "theirs", "Live")}}
	_, errHTTP := c.GatewayV1().HTTPRoutes("edge").Create(ctx, &gwv1.HTTPRoute{ObjectMeta: shop, Status: gwv1.HTTPRouteStatus{RouteStatus: live}}, metav1.CreateOptions{})
	_, errGRPC := c.GatewayV1().GRPCRoutes("edge").Create(ctx, &gwv1.GRPCRoute{ObjectMeta: shop, Status: gwv1.GRPCRouteStatus{RouteStatus: live}}, metav1.CreateOptions{})
	_, errTLS := c.GatewayV1().TLSRoutes("edge").Create(ctx, &gwv1.TLSRoute{ObjectMeta: shop, Status: gwv1.TLSRouteStatus{RouteStatus: live}}, metav1.CreateOptions{})
	_, errTCP := c.GatewayV1().TCPRoutes("edge").Create(ctx, &gwv1.TCPRoute{ObjectMeta: shop, Status: gwv1.TCPRouteStatus{RouteStatus: live}}, metav1.CreateOptions{})
	if err := errors.Join(errHTTP, errGRPC, errTLS, errTCP); err != nil {
		t.Fatal(err)
	}
	c.ClearActions()
	return c
}

// statusUpdates counts update actions on status subresources.
func statusUpdates(c *gwfake.Clientset) map[string]int {
	out := map[string]int{}
	for _, a := range c.Actions() {
		if u, ok := a.(k8stesting.UpdateAction); ok && u.GetSubresource() == "status" {
			out[u.GetResource().Resource]++
		}
	}
	return out
}

func runWriter(t *testing.T, w *Writer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWriterWritesGatewayAPIStatuses(t *testing.T) {
	c := gatewayAPIFixture(t)
	w, err := New(Options{Gateway: c, Controller: me, Cache: apiCache{c}})
	if err != nil {
		t.Fatal(err)
	}
	// Reported before the term starts: written once it does.
	want := desiredStatuses("Accepted")
	w.ReportGatewayAPI(want)
	runWriter(t, w)

	eventually(t, "all seven statuses written", func() bool {
		n := statusUpdates(c)
		return n["gatewayclasses"] == 1 && n["gateways"] == 1 && n["listenersets"] == 1 && n["httproutes"] == 1 && n["grpcroutes"] == 1 &&
			n["tlsroutes"] == 1 && n["tcproutes"] == 1
	})
	class, _ := apiCache{c}.GatewayClass("tlsplane")
	if !equality.Semantic.DeepEqual(class.Status, want.GatewayClasses["tlsplane"]) {
		t.Errorf("GatewayClass status = %+v", class.Status)
	}
	gw, _ := apiCache{c}.Gateway(webGW)
	if !equality.Semantic.DeepEqual(gw.Status, want.Gateways[webGW]) {
		t.Errorf("Gateway status = %+v", gw.Status)
	}
	ls, _ := apiCache{c}.ListenerSet(teamLS)
	if !equality.Semantic.DeepEqual(ls.Status, want.ListenerSets[teamLS]) {
		t.Errorf("ListenerSet status = %+v", ls.Status)
	}
	// Each route kind's parents on edge/shop, and the prefix of our reason
	// there.
	parentsOf := func(kind translator.Kind) func() []string {
		rk, _ := translator.RouteKindOf(kind)
		return func() []string {
			o, _ := apiCache{c}.Route(kind, shopRT)
			r, _ := o.(metav1.Object)
			return names2(*rk.RouteStatus(r))
		}
	}
	httpParents, grpcParents := parentsOf(translator.KindHTTPRoute), parentsOf(translator.KindGRPCRoute)
	tlsParents, tcpParents := parentsOf(translator.KindTLSRoute), parentsOf(translator.KindTCPRoute)
	routes := []struct {
		kind, prefix string
		parents      func() []string
	}{{"HTTPRoute", "", httpParents}, {"GRPCRoute", "gRPC", grpcParents}, {"TLSRoute", "TLS", tlsParents}, {"TCPRoute", "TCP", tcpParents}}
	for _, r := range routes {
		if got := r.parents(); !slices.Equal(got, []string{"example.com/other/theirs/Live", "tlsplane.io/controller/web/" + r.prefix + "Accepted"}) {
			t.Errorf("%s parents = %v, want the other controller's live entry, then ours", r.kind, got)
		}
	}

	// The same statuses again: the compare finds nothing to write.
	c.ClearActions()
	w.ReportGatewayAPI(desiredStatuses("Accepted"))
	time.Sleep(200 * time.Millisecond)
	if n := statusUpdates(c); len(n) != 0 {
		t.Errorf("unchanged statuses rewritten: %v", n)
	}

	// Another controller rewrites its entry meanwhile; ours changes.
	theirsNewer(t, c.GatewayV1().HTTPRoutes("edge"), func(r *gwv1.HTTPRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus })
	theirsNewer(t, c.GatewayV1().GRPCRoutes("edge"), func(r *gwv1.GRPCRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus })
	theirsNewer(t, c.GatewayV1().TLSRoutes("edge"), func(r *gwv1.TLSRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus })
	theirsNewer(t, c.GatewayV1().TCPRoutes("edge"), func(r *gwv1.TCPRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus })
	w.ReportGatewayAPI(desiredStatuses("NotAllowedByListeners"))
	for _, r := range routes {
		eventuallyParents(t, r.kind+" parent updated", r.parents, "example.com/other/theirs/Newer", "tlsplane.io/controller/web/"+r.prefix+"NotAllowedByListeners")
	}

	// The GRPCRoute and the TLSRoute leave our Gateways: our parent goes,
	// theirs stays, and the HTTPRoute and TCPRoute of the same name keep
	// ours.
	gone := desiredStatuses("NotAllowedByListeners")
	delete(gone.GRPCRoutes, shopRT)
	delete(gone.TLSRoutes, shopRT)
	w.ReportGatewayAPI(gone)
	eventuallyParents(t, "our parent removed from a GRPCRoute that left our Gateways", grpcParents, "example.com/other/theirs/Newer")
	eventuallyParents(t, "our parent removed from a TLSRoute that left our Gateways", tlsParents, "example.com/other/theirs/Newer")
	if got := httpParents(); len(got) != 2 {
		t.Errorf("HTTPRoute parents = %v after the GRPCRoute and TLSRoute of its name left, want ours kept", got)
	}
	if got := tcpParents(); len(got) != 2 {
		t.Errorf("TCPRoute parents = %v after the GRPCRoute and TLSRoute of its name left, want ours kept", got)
	}

	// Then the HTTPRoute and the TCPRoute leave too (new maps: the writer
	// keeps the last).
	gone = desiredStatuses("NotAllowedByListeners")
	delete(gone.GRPCRoutes, shopRT)
	delete(gone.TLSRoutes, shopRT)
	delete(gone.HTTPRoutes, shopRT)
	delete(gone.TCPRoutes, shopRT)
	w.ReportGatewayAPI(gone)
	eventuallyParents(t, "our parent removed from a route that left our Gateways", httpParents, "example.com/other/theirs/Newer")
	eventuallyParents(t, "our parent removed from a TCPRoute that left our Gateways", tcpParents, "example.com/other/theirs/Newer")
}

// theirsNewer has the other controller rewrite its entry, the first
// parent, on the route edge/shop of client's kind; status is where a T
// keeps its RouteStatus.
func theirsNewer[T any](t *testing.T, client wholeClient[T], status func(T) *gwv1.RouteStatus) {
	t.Helper()
	ctx := context.Background()
	r, err := client.Get(ctx, shopRT.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status(r).Parents[0] = parent(otherCn, "theirs", "Newer")
	if _, err := client.UpdateStatus(ctx, r, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// eventuallyParents waits until parents are want (controller/gateway/reason).
func eventuallyParents(t *testing.T, what string, parents func() []string, want ...string) {
	t.Helper()
	eventually(t, what, func() bool { return slices.Equal(parents(), want) })
}

func names2(st gwv1.RouteStatus) []string {
	var out []string
	for _, p := range st.Parents {
		out = append(out, string(p.ControllerName)+"/"+string(p.ParentRef.Name)+"/"+p.Conditions[0].Reason)
	}
	return out
}

func TestMergeRouteKeepsOtherControllersParents(t *testing.T) {
	var live gwv1.RouteStatus
	for i := range 31 {
		live.Parents = append(live.Parents, parent(otherCn, "gw"+string(rune('a'+i%26)), "Accepted"))
	}
	desired := gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{parent(me, "web", "Accepted"), parent(me, "api", "Accepted")}}
	if !routeNeedsWrite(live, desired, me) {
		t.Fatal("routeNeedsWrite = false with none of ours live")
	}
	got := mergeRoute(live, desired, me)
	if len(got.Parents) != maxRouteParents {
		t.Fatalf("%d parents, want the API's limit %d", len(got.Parents), maxRouteParents)
	}
	others := 0
	for _, p := range got.Parents {
		if p.ControllerName == otherCn {
			others++
		}
	}
	if others != 31 || got.Parents[31].ParentRef.Name != "web" {
		t.Errorf("over the limit, %d of 31 other parents kept and last is %s; want all of theirs and our first", others, got.Parents[31].ParentRef.Name)
	}
	if routeNeedsWrite(gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{parent(otherCn, "x", "A")}},
		gwv1.RouteStatus{}, me) {
		t.Error("routeNeedsWrite = true with nothing of ours on either side")
	}
}
