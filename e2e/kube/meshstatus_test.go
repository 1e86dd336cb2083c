package kube

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestMeshRouteStatusWithServiceParent: in Kubernetes mode, HTTPRoutes
// whose parent is a Service of a namespace in the mesh (labelled
// tlsplane.io/mesh=enabled) get our status entry with the Service as
// parent on the real API server: a producer route (the Service's
// namespace) and a consumer route (another mesh namespace) Accepted, a
// consumer route of a namespace outside the mesh NoMatchingParent; a
// route whose parent Service's namespace leaves the mesh loses our entry
// (another mesh may own that parent).
func TestMeshRouteStatusWithServiceParent(t *testing.T) {
	c := adminClients(t)
	ctx := context.Background()
	svcNS, callerNS, outsideNS := newNamespace(t, c), newNamespace(t, c), newNamespace(t, c)
	for _, ns := range []string{svcNS, callerNS} {
		label(t, c, ns, `{"metadata":{"labels":{"tlsplane.io/mesh":"enabled"}}}`)
	}
	startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("meshstatus"), "--namespaces", strings.Join([]string{svcNS, callerNS, outsideNS}, ","))...)
	createService(t, c, svcNS, "echo", corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)})

	group, kind := gwv1.Group(""), gwv1.Kind("Service")
	svcNamespace := gwv1.Namespace(svcNS)
	parent := gwv1.ParentReference{Group: &group, Kind: &kind, Namespace: &svcNamespace, Name: "echo"}
	port := gwv1.PortNumber(80)
	route := func(ns, name string) routeAPI {
		r := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{parent}},
			Rules: []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{
				Name: "echo", Namespace: &svcNamespace, Port: &port}}}}}},
		}}
		return routeAPIOf(t, "HTTPRoute", c.gateway.GatewayV1().HTTPRoutes(ns), r, func(r *gwv1.HTTPRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus })
	}
	producer, consumer, outside := route(svcNS, "producer"), route(callerNS, "consumer"), route(outsideNS, "outside")

	serviceParent := func(st gwv1.RouteStatus) error {
		for _, p := range st.Parents {
			if p.ControllerName == controller && (p.ParentRef.Kind == nil || *p.ParentRef.Kind != "Service" || p.ParentRef.Name != "echo") {
				return fmt.Errorf("our parent entry names %+v, want Service echo", p.ParentRef)
			}
		}
		return nil
	}
	t.Log("producer and consumer routes: Accepted with the Service as parent")
	expectOurParent(t, producer, "Accepted", serviceParent)
	expectOurParent(t, consumer, "Accepted", serviceParent)

	t.Log("a consumer route of a namespace outside the mesh: NoMatchingParent")
	expectOurEntry(t, outside, func(p gwv1.RouteParentStatus) error {
		accepted := findCondition(p.Conditions, "Accepted")
		if accepted == nil || accepted.Status != metav1.ConditionFalse || accepted.Reason != string(gwv1.RouteReasonNoMatchingParent) {
			return fmt.Errorf("Accepted %+v, want False NoMatchingParent", accepted)
		}
		if !strings.Contains(accepted.Message, "tlsplane.io/mesh=enabled") {
			return fmt.Errorf("message %q does not name the mesh selector", accepted.Message)
		}
		return nil
	})

	t.Log("the Service's namespace leaves the mesh: our entry goes")
	label(t, c, svcNS, `{"metadata":{"labels":{"tlsplane.io/mesh":null}}}`)
	eventually(t, statusWait, "no parent entry of ours on the producer route", func() error {
		st, _, err := producer.status(ctx)
		if err != nil {
			return err
		}
		for _, p := range st.Parents {
			if p.ControllerName == controller {
				return fmt.Errorf("our entry is still there: %+v", p)
			}
		}
		return nil
	})
}

// label merge-patches namespace ns's metadata with patch.
func label(t *testing.T, c clients, ns, patch string) {
	t.Helper()
	if _, err := c.kube.CoreV1().Namespaces().Patch(context.Background(), ns, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch namespace %s: %v", ns, err)
	}
}

// expectOurEntry waits until the route has one parent entry of ours that
// check accepts.
func expectOurEntry(t *testing.T, r routeAPI, check func(gwv1.RouteParentStatus) error) {
	t.Helper()
	eventually(t, statusWait, r.kind+" parent entry of ours", func() error {
		st, _, err := r.status(context.Background())
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
		return check(ours[0])
	})
}
