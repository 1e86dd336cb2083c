package perf

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/mesh"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// meshNamespaces are Inputs' namespaces (team-0 … team-49): every one of
// them is in MeshInputs' mesh, so the mesh has as many fleets.
const meshNamespaces = 50

// MeshInputs are Inputs(n) in a mesh (issue 39's costs): the 50
// namespaces joined (tlsplane.io/mesh: enabled), each Service given a
// cluster IP, and each reached through a producer HTTPRoute of its own
// whose parent is the Service (MeshRoute). Every mesh fleet, one per
// namespace, then has n outbound listeners with a route configuration
// each, and reaches the n policy-targeted clusters.
func MeshInputs(n int) translator.Inputs {
	in := Inputs(n)
	for i := range meshNamespaces {
		in.Namespaces = append(in.Namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("team-%d", i), Labels: map[string]string{mesh.Label: mesh.Enabled}}})
	}
	for i, svc := range in.Services {
		svc.Spec.ClusterIP = fmt.Sprintf("10.96.%d.%d", i/250, i%250+1)
		in.HTTPRoutes = append(in.HTTPRoutes, MeshRoute(svc.Namespace, svc.Name, "/"))
	}
	return in
}

// MeshFleetOf is the mesh fleet of MeshInputs' i-th sidecar: sidecars
// are spread over the namespaces as Services are.
func MeshFleetOf(i int) string { return plan.MeshFleet(fmt.Sprintf("team-%d", i%meshNamespaces)) }

// MeshRoute is the producer HTTPRoute of MeshInputs for Service ns/name
// port 443, matching path prefix path and sending to the same port.
func MeshRoute(ns, name, path string) *gwv1.HTTPRoute {
	core, service := gwv1.Group(""), gwv1.Kind("Service")
	port := gwv1.PortNumber(443)
	prefix := gwv1.PathMatchPathPrefix
	return &gwv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1},
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Group: &core, Kind: &service, Name: gwv1.ObjectName(name), Port: &port}}},
			Rules: []gwv1.HTTPRouteRule{{
				Matches:     []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: &prefix, Value: &path}}},
				BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Port: &port}}}},
			}},
		},
	}
}
