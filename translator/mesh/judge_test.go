package mesh

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/route"
)

const ours gwv1.GatewayController = "tlsplane.io/controller"

var stamp = metav1.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func namespace(name string, inMesh bool) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if inMesh {
		ns.Labels = map[string]string{Label: Enabled}
	}
	return ns
}

func service(ns, name, clusterIP string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{ClusterIP: clusterIP, Ports: ports}}
}

func tcp(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, Protocol: corev1.ProtocolTCP}
}

func serviceRef(ns, name string, port *gwv1.PortNumber, section string) gwv1.ParentReference {
	core, kind := gwv1.Group(""), gwv1.Kind("Service")
	ref := gwv1.ParentReference{Group: &core, Kind: &kind, Name: gwv1.ObjectName(name), Port: port}
	if ns != "" {
		n := gwv1.Namespace(ns)
		ref.Namespace = &n
	}
	if section != "" {
		s := gwv1.SectionName(section)
		ref.SectionName = &s
	}
	return ref
}

func httpRoute(ns, name string, parents ...gwv1.ParentReference) *gwv1.HTTPRoute {
	port := gwv1.PortNumber(80)
	return &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 3},
		Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parents},
			Rules: []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{
				BackendObjectReference: gwv1.BackendObjectReference{Name: "echo", Namespace: ptr(gwv1.Namespace("shop")), Port: &port}}}}}}}}
}

func ptr[T any](v T) *T { return &v }

// world: shop and caller in the mesh, outside not; shop/echo has ports
// 80 (http), 8080 and UDP 53; shop/headless and shop/name are not
// capturable.
func world() ([]*corev1.Namespace, *input.Index) {
	namespaces := []*corev1.Namespace{namespace("shop", true), namespace("caller", true), namespace("outside", false)}
	ext := service("shop", "name", "")
	ext.Spec.Type = corev1.ServiceTypeExternalName
	in := input.Inputs{Services: []*corev1.Service{
		service("shop", "echo", "10.96.0.10", tcp("http", 80), tcp("alt", 8080), corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}),
		service("shop", "headless", corev1.ClusterIPNone, tcp("http", 80)),
		ext,
		service("outside", "other", "10.96.1.1", tcp("http", 80)),
	}, Namespaces: namespaces}
	return namespaces, input.NewIndex(in)
}

// TestJudgeServiceParents: each rule of a Service parent (GEP-1426,
// GEP-1294), with the condition it writes and the ports it attaches to.
func TestJudgeServiceParents(t *testing.T) {
	p80, p81, p53 := ptr(gwv1.PortNumber(80)), ptr(gwv1.PortNumber(81)), ptr(gwv1.PortNumber(53))
	cases := []struct {
		name    string
		route   *gwv1.HTTPRoute
		ours    bool   // a status entry of ours for the Service parent
		reason  string // Accepted's reason
		message string // part of Accepted's message
		ports   []int32
		// consumer: the ports are attached for the route's namespace only.
		consumer bool
	}{
		{"producer, port", httpRoute("shop", "r", serviceRef("", "echo", p80, "")), true, "Accepted", "producer HTTPRoute", []int32{80}, false},
		{"producer, every TCP port", httpRoute("shop", "r", serviceRef("", "echo", nil, "")), true, "Accepted", "every caller", []int32{80, 8080}, false},
		{"producer, sectionName is a port's name", httpRoute("shop", "r", serviceRef("", "echo", nil, "alt")), true, "Accepted", "", []int32{8080}, false},
		{"port and sectionName of two ports", httpRoute("shop", "r", serviceRef("", "echo", p80, "alt")), true, "NoMatchingParent", `no TCP port 80 named "alt"`, nil, false},
		{"no such port", httpRoute("shop", "r", serviceRef("", "echo", p81, "")), true, "NoMatchingParent", "Service shop/echo has no TCP port 81", nil, false},
		{"a UDP port", httpRoute("shop", "r", serviceRef("", "echo", p53, "")), true, "NoMatchingParent", "no TCP port 53", nil, false},
		{"no such Service", httpRoute("shop", "r", serviceRef("", "absent", nil, "")), true, "NoMatchingParent", "Service shop/absent does not exist", nil, false},
		{"headless", httpRoute("shop", "r", serviceRef("", "headless", nil, "")), true, "UnsupportedValue", "headless", nil, false},
		{"ExternalName", httpRoute("shop", "r", serviceRef("", "name", nil, "")), true, "UnsupportedValue", "ExternalName", nil, false},
		{"consumer", httpRoute("caller", "r", serviceRef("shop", "echo", nil, "")), true, "Accepted", "callers in namespace caller", []int32{80, 8080}, true},
		{"consumer outside the mesh", httpRoute("outside", "r", serviceRef("shop", "echo", nil, "")), true, "NoMatchingParent", "namespace outside is not in the mesh", nil, false},
		{"Service outside the mesh", httpRoute("outside", "r", serviceRef("", "other", nil, "")), false, "", "", nil, false},
		{"kind Service of the Gateway API group", httpRoute("shop", "r", gwv1.ParentReference{Kind: ptr(gwv1.Kind("Service")), Name: "echo"}), false, "", "", nil, false},
		{"a Gateway", httpRoute("shop", "r", gwv1.ParentReference{Name: "edge"}), false, "", "", nil, false},
	}
	namespaces, ix := world()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := Judge(Routes{HTTP: []*gwv1.HTTPRoute{tc.route}}, ix, DefaultSelector.MembersOf(namespaces), DefaultSelector, ours, stamp)
			nn := types.NamespacedName{Namespace: tc.route.Namespace, Name: tc.route.Name}
			st, ok := res.HTTPRoutes[nn]
			if ok != tc.ours {
				t.Fatalf("status of ours: %v, want %v (%+v)", ok, tc.ours, st)
			}
			if !ok {
				if len(res.Producers)+len(res.Consumers) > 0 {
					t.Errorf("attached without a parent of ours: %v %v", res.Producers, res.Consumers)
				}
				return
			}
			if len(st.Parents) != 1 || st.Parents[0].ControllerName != ours {
				t.Fatalf("parents %+v, want one of ours", st.Parents)
			}
			accepted := st.Parents[0].Conditions[0]
			if accepted.Type != "Accepted" || accepted.Reason != tc.reason || !strings.Contains(accepted.Message, tc.message) || accepted.ObservedGeneration != 3 {
				t.Errorf("Accepted %+v, want reason %s, message with %q, observedGeneration 3", accepted, tc.reason, tc.message)
			}
			if (accepted.Status == metav1.ConditionTrue) != (tc.reason == "Accepted") {
				t.Errorf("Accepted status %s with reason %s", accepted.Status, accepted.Reason)
			}
			attached := res.Producers
			if tc.consumer {
				attached = res.Consumers[tc.route.Namespace]
				if len(res.Producers) > 0 {
					t.Errorf("a consumer route attached as a producer: %v", res.Producers)
				}
			}
			var ports []int32
			for _, port := range []int32{53, 80, 8080} {
				if len(attached[input.ServicePort{Service: input.NameOf("shop", "echo"), Port: port}]) > 0 {
					ports = append(ports, port)
				}
			}
			if !equalPorts(ports, tc.ports) {
				t.Errorf("attached to ports %v, want %v", ports, tc.ports)
			}
		})
	}
}

func equalPorts(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMeshBackendsNeedNoReferenceGrant: a mesh route's backendRef to
// another namespace resolves without a grant (GEP-1426).
func TestMeshBackendsNeedNoReferenceGrant(t *testing.T) {
	namespaces, ix := world()
	r := httpRoute("caller", "r", serviceRef("shop", "echo", nil, ""))
	res := Judge(Routes{HTTP: []*gwv1.HTTPRoute{r}}, ix, DefaultSelector.MembersOf(namespaces), DefaultSelector, ours, stamp)
	resolved := res.HTTPRoutes[input.NameOf("caller", "r")].Parents[0].Conditions[1]
	if resolved.Type != "ResolvedRefs" || resolved.Status != metav1.ConditionTrue {
		t.Errorf("ResolvedRefs %+v, want True", resolved)
	}
}

// TestNoMembersNoMesh: without a namespace in the mesh nothing is judged.
func TestNoMembersNoMesh(t *testing.T) {
	_, ix := world()
	res := Judge(Routes{HTTP: []*gwv1.HTTPRoute{httpRoute("shop", "r", serviceRef("", "echo", nil, ""))}}, ix, DefaultSelector.MembersOf([]*corev1.Namespace{namespace("shop", false)}), DefaultSelector, ours, stamp)
	if res.HTTPRoutes != nil || res.Producers != nil {
		t.Errorf("judged without members: %+v", res)
	}
	if fleets, _ := Fleets(res, ix); fleets != nil {
		t.Errorf("fleets without members: %v", fleets)
	}
}

// TestMergeStatus: the Gateway rules' entries are kept as they are, ours
// for Service parents follow; another controller's entry (in both) is
// not repeated.
func TestMergeStatus(t *testing.T) {
	other := gwv1.RouteParentStatus{ControllerName: "other.example/mesh", ParentRef: serviceRef("", "echo", nil, "")}
	gw := gwv1.RouteParentStatus{ControllerName: ours, ParentRef: gwv1.ParentReference{Name: "edge"}}
	svc := gwv1.RouteParentStatus{ControllerName: ours, ParentRef: serviceRef("", "echo", nil, "")}
	got := MergeStatus(gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{other, gw}}, true, gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{other, svc}}, ours)
	if len(got.Parents) != 3 || got.Parents[0].ControllerName != other.ControllerName || got.Parents[1].ParentRef.Name != "edge" || got.Parents[2].ParentRef.Name != "echo" {
		t.Errorf("merged %+v, want other, edge, echo", got.Parents)
	}
	alone := gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{other, svc}}
	if got := MergeStatus(gwv1.RouteStatus{}, false, alone, ours); len(got.Parents) != 2 {
		t.Errorf("without Gateway parents: %+v, want the mesh's status as it is", got.Parents)
	}
}

func grpcRoute(ns, name string, parents ...gwv1.ParentReference) *gwv1.GRPCRoute {
	port := gwv1.PortNumber(80)
	return &gwv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1},
		Spec: gwv1.GRPCRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parents},
			Rules: []gwv1.GRPCRouteRule{{BackendRefs: []gwv1.GRPCBackendRef{{BackendRef: gwv1.BackendRef{
				BackendObjectReference: gwv1.BackendObjectReference{Name: "echo", Namespace: ptr(gwv1.Namespace("shop")), Port: &port}}}}}}}}
}

// TestGRPCRoutesWinOverHTTPRoutes: on a Service port where a GRPCRoute
// and an HTTPRoute apply to the same callers, the GRPCRoute wins
// (GEP-1294); producer and consumer routes are different callers.
func TestGRPCRoutesWinOverHTTPRoutes(t *testing.T) {
	namespaces, ix := world()
	p80 := ptr(gwv1.PortNumber(80))
	routes := Routes{
		GRPC: []*gwv1.GRPCRoute{grpcRoute("shop", "grpc", serviceRef("", "echo", p80, ""))},
		HTTP: []*gwv1.HTTPRoute{
			httpRoute("shop", "on-80", serviceRef("", "echo", p80, "")),
			httpRoute("shop", "everywhere", serviceRef("", "echo", nil, "")),
			httpRoute("caller", "consumer", serviceRef("shop", "echo", p80, "")),
		},
	}
	res := Judge(routes, ix, DefaultSelector.MembersOf(namespaces), DefaultSelector, ours, stamp)
	for _, tc := range []struct {
		route, reason, message string
	}{
		{"shop/on-80", ReasonConflicted, "Service shop/echo port 80: GRPCRoutes apply there"},
		{"shop/everywhere", "Accepted", "; port 80 left to the GRPCRoutes"},
		{"caller/consumer", "Accepted", "callers in namespace caller"},
	} {
		ns, name, _ := strings.Cut(tc.route, "/")
		accepted := res.HTTPRoutes[input.NameOf(ns, name)].Parents[0].Conditions[0]
		if accepted.Reason != tc.reason || !strings.Contains(accepted.Message, tc.message) {
			t.Errorf("%s: Accepted %s %q, want %s with %q", tc.route, accepted.Reason, accepted.Message, tc.reason, tc.message)
		}
	}
	if st := res.GRPCRoutes[input.NameOf("shop", "grpc")]; st.Parents[0].Conditions[0].Reason != "Accepted" {
		t.Errorf("the GRPCRoute: %+v", st.Parents)
	}
	names := func(routes []*route.Route) []string {
		var out []string
		for _, rs := range routes {
			out = append(out, rs.Name.String())
		}
		return out
	}
	echo := func(port int32) input.ServicePort {
		return input.ServicePort{Service: input.NameOf("shop", "echo"), Port: port}
	}
	for _, tc := range []struct {
		what string
		got  []string
		want []string
	}{
		{"producers on 80", names(res.Producers[echo(80)]), []string{"shop/grpc"}},
		{"producers on 8080", names(res.Producers[echo(8080)]), []string{"shop/everywhere"}},
		{"caller's consumers on 80", names(res.Consumers["caller"][echo(80)]), []string{"caller/consumer"}},
	} {
		if strings.Join(tc.got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: %v, want %v", tc.what, tc.got, tc.want)
		}
	}
}
