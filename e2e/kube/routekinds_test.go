package kube

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestStatusOfEveryRouteKind runs tlsplane with deploy/'s ServiceAccount
// over one Gateway of ours with a listener for each route kind and one
// route of each kind, and checks on the real API server that each route
// is watched (through its description's resource), judged, and given our
// parent entry; then another controller writes over each route's status
// and tlsplane restores its own entry and keeps the other's (the status
// writer's one path for every route kind, told by the informers).
func TestStatusOfEveryRouteKind(t *testing.T) {
	c := adminClients(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("routekinds"), "--namespaces", ns)...)

	class := createClass(t, c, ns)

	createService(t, c, ns, "backend",
		corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)},
		corev1.ServicePort{Name: "tls", Port: 443, TargetPort: intstr.FromInt32(8443)},
		corev1.ServicePort{Name: "db", Port: 5432, TargetPort: intstr.FromInt32(5432)},
		corev1.ServicePort{Name: "dns", Port: 53, TargetPort: intstr.FromInt32(5353), Protocol: corev1.ProtocolUDP})
	passthrough := gwv1.TLSModePassthrough
	gw := httpGateway(ns, "edge", class, "192.0.2.20", 8080)
	gw.Spec.Listeners = append(gw.Spec.Listeners,
		gwv1.Listener{Name: "tls", Protocol: gwv1.TLSProtocolType, Port: 8443, TLS: &gwv1.ListenerTLSConfig{Mode: &passthrough}},
		gwv1.Listener{Name: "tcp", Protocol: gwv1.TCPProtocolType, Port: 5432},
		gwv1.Listener{Name: "udp", Protocol: gwv1.UDPProtocolType, Port: 5353})
	if _, err := c.gateway.GatewayV1().Gateways(ns).Create(ctx, gw, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Gateway: %v", err)
	}

	parents := gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "edge"}}}
	ref := func(port int32) gwv1.BackendRef {
		p := gwv1.PortNumber(port)
		return gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: "backend", Port: &p}}
	}
	meta := metav1.ObjectMeta{Namespace: ns, Name: "r"}
	v1 := c.gateway.GatewayV1()
	routes := []routeAPI{
		routeAPIOf(t, "HTTPRoute", v1.HTTPRoutes(ns), &gwv1.HTTPRoute{ObjectMeta: meta, Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: parents,
			Hostnames: []gwv1.Hostname{"web.example.com"},
			Rules:     []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: ref(80)}}}}}},
			func(r *gwv1.HTTPRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus }),
		routeAPIOf(t, "GRPCRoute", v1.GRPCRoutes(ns), &gwv1.GRPCRoute{ObjectMeta: meta, Spec: gwv1.GRPCRouteSpec{CommonRouteSpec: parents,
			Hostnames: []gwv1.Hostname{"grpc.example.com"},
			Rules:     []gwv1.GRPCRouteRule{{BackendRefs: []gwv1.GRPCBackendRef{{BackendRef: ref(80)}}}}}},
			func(r *gwv1.GRPCRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus }),
		routeAPIOf(t, "TLSRoute", v1.TLSRoutes(ns), &gwv1.TLSRoute{ObjectMeta: meta, Spec: gwv1.TLSRouteSpec{CommonRouteSpec: parents,
			Hostnames: []gwv1.Hostname{"vault.example.com"},
			Rules:     []gwv1.TLSRouteRule{{BackendRefs: []gwv1.BackendRef{ref(443)}}}}},
			func(r *gwv1.TLSRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus }),
		routeAPIOf(t, "TCPRoute", v1.TCPRoutes(ns), &gwv1.TCPRoute{ObjectMeta: meta, Spec: gwv1.TCPRouteSpec{CommonRouteSpec: parents,
			Rules: []gwv1.TCPRouteRule{{BackendRefs: []gwv1.BackendRef{ref(5432)}}}}},
			func(r *gwv1.TCPRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus }),
		routeAPIOf(t, "UDPRoute", v1.UDPRoutes(ns), &gwv1.UDPRoute{ObjectMeta: meta, Spec: gwv1.UDPRouteSpec{CommonRouteSpec: parents,
			Rules: []gwv1.UDPRouteRule{{BackendRefs: []gwv1.BackendRef{ref(53)}}}}},
			func(r *gwv1.UDPRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus }),
	}

	t.Log("each route kind: our parent entry, accepted and resolved")
	for _, r := range routes {
		expectOurParent(t, r, "Accepted", nil)
	}

	t.Log("another controller writes over each route's status: ours comes back, theirs stays")
	for _, r := range routes {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			return r.editStatus(ctx, func(st *gwv1.RouteStatus) {
				for i := range st.Parents {
					if st.Parents[i].ControllerName == controller {
						st.Parents[i].Conditions[0].Reason = "Tampered"
					}
				}
				st.Parents = append(st.Parents, gwv1.RouteParentStatus{
					ParentRef: gwv1.ParentReference{Name: "theirs"}, ControllerName: "example.com/other",
					Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Theirs", LastTransitionTime: metav1.Now()}},
				})
			})
		})
		if err != nil {
			t.Fatalf("%s: write another controller's status: %v", r.kind, err)
		}
	}
	for _, r := range routes {
		expectOurParent(t, r, "Accepted", func(st gwv1.RouteStatus) error {
			for _, p := range st.Parents {
				if p.ControllerName == "example.com/other" && p.ParentRef.Name == "theirs" {
					return nil
				}
			}
			return fmt.Errorf("the other controller's parent is gone: %+v", st.Parents)
		})
	}
}

// routeAPI reads and edits one route's status, whatever its kind.
type routeAPI struct {
	kind       string
	status     func(context.Context) (gwv1.RouteStatus, int64, error)
	editStatus func(context.Context, func(*gwv1.RouteStatus)) error
}

// routeClient is the part of a route kind's typed client routeAPI uses.
type routeClient[T any] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	UpdateStatus(context.Context, T, metav1.UpdateOptions) (T, error)
}

// routeAPIOf creates route with client and returns its routeAPI; status
// is where a T keeps its RouteStatus.
func routeAPIOf[T metav1.Object](t *testing.T, kind string, client routeClient[T], route T, status func(T) *gwv1.RouteStatus) routeAPI {
	t.Helper()
	if _, err := client.Create(context.Background(), route, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s: %v", kind, err)
	}
	name := route.GetName()
	return routeAPI{
		kind: kind,
		status: func(ctx context.Context) (gwv1.RouteStatus, int64, error) {
			r, err := client.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return gwv1.RouteStatus{}, 0, err
			}
			return *status(r), r.GetGeneration(), nil
		},
		editStatus: func(ctx context.Context, edit func(*gwv1.RouteStatus)) error {
			r, err := client.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			edit(status(r))
			_, err = client.UpdateStatus(ctx, r, metav1.UpdateOptions{FieldManager: "other-controller"})
			return err
		},
	}
}

// expectOurParent waits until the route has one parent entry of ours,
// Accepted (for reason) and ResolvedRefs True, and also passes more.
func expectOurParent(t *testing.T, r routeAPI, reason string, more func(gwv1.RouteStatus) error) {
	t.Helper()
	eventually(t, statusWait, r.kind+" parent of ours", func() error {
		st, generation, err := r.status(context.Background())
		if err != nil {
			return err
		}
		var ours []gwv1.RouteParentStatus
		for _, p := range st.Parents {
			if p.ControllerName == controller {
				ours = append(ours, p)
			}
		}
		if len(ours) != 1 {
			return fmt.Errorf("%d parent entries of %s, want 1: %+v", len(ours), controller, st.Parents)
		}
		if err := expectConditions(ours[0].Conditions, map[string]cond{
			"Accepted": {metav1.ConditionTrue, reason}, "ResolvedRefs": {metav1.ConditionTrue, "ResolvedRefs"},
		}, generation); err != nil {
			return err
		}
		if more != nil {
			return more(st)
		}
		return nil
	})
}
