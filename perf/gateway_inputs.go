package perf

import (
	"fmt"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// GatewayInputs are Inputs(n) behind one Gateway (edge/web, an HTTP
// listener on port 80 allowing routes from every namespace), each Service
// reached by an HTTPRoute of its own: svc-i.example → svc-i:443.
func GatewayInputs(n int) translator.Inputs {
	in := Inputs(n)
	all := gwv1.NamespacesFromAll
	in.GatewayClasses = []*gwv1.GatewayClass{{
		ObjectMeta: metav1.ObjectMeta{Name: "tlsplane", Generation: 1},
		Spec:       gwv1.GatewayClassSpec{ControllerName: translator.DefaultControllerName},
	}}
	in.Gateways = []*gwv1.Gateway{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "web", Generation: 1},
		Spec: gwv1.GatewaySpec{GatewayClassName: "tlsplane", Listeners: []gwv1.Listener{{
			Name: "http", Protocol: gwv1.HTTPProtocolType, Port: 80,
			AllowedRoutes: &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: &all}},
		}}},
	}}
	for _, svc := range in.Services {
		in.HTTPRoutes = append(in.HTTPRoutes, Route(svc.Namespace, svc.Name, "/"))
	}
	return in
}

// Route is the HTTPRoute of GatewayInputs for Service ns/name, matching
// path prefix path.
func Route(ns, name, path string) *gwv1.HTTPRoute {
	gwNamespace := gwv1.Namespace("edge")
	port := gwv1.PortNumber(443)
	prefix := gwv1.PathMatchPathPrefix
	return &gwv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1},
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Namespace: &gwNamespace, Name: "web"}}},
			Hostnames:       []gwv1.Hostname{gwv1.Hostname(name + ".example")},
			Rules: []gwv1.HTTPRouteRule{{
				Matches:     []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: &prefix, Value: &path}}},
				BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Port: &port}}}},
			}},
		},
	}
}

// MovedEndpoints is a new EndpointSlice es at resourceVersion rv whose
// first address moved: what an informer delivers when a Pod is replaced.
func MovedEndpoints(es *discoveryv1.EndpointSlice, rv int) *discoveryv1.EndpointSlice {
	out := es.DeepCopy()
	out.ResourceVersion = fmt.Sprint(rv)
	out.Endpoints[0].Addresses = []string{fmt.Sprintf("10.250.%d.%d", rv/250%250, rv%250)}
	return out
}

// WithBackendClientCertificate is in with its Gateway (edge/web) naming a
// backend client certificate, Secret edge/web-client: the Gateway's fleet
// is then served its own version of every TLS cluster its routes reach.
func WithBackendClientCertificate(tb testing.TB, in translator.Inputs) translator.Inputs {
	gw := in.Gateways[0].DeepCopy()
	gw.Spec.TLS = &gwv1.GatewayTLSConfig{Backend: &gwv1.GatewayBackendTLS{ClientCertificateRef: &gwv1.SecretObjectReference{Name: "web-client"}}}
	in.Gateways = []*gwv1.Gateway{gw}
	in.Secrets = append(in.Secrets, translatortest.TLSSecret(tb, "edge", "web-client", "web-client.edge"))
	return in
}

// GRPCGatewayInputs are GatewayInputs with a GRPCRoute per Service in
// place of its HTTPRoute: svc-i.example, gRPC service svc-i.v1.Echo.
func GRPCGatewayInputs(n int) translator.Inputs {
	in := GatewayInputs(n)
	in.HTTPRoutes = nil
	for _, svc := range in.Services {
		in.GRPCRoutes = append(in.GRPCRoutes, GRPCRoute(svc.Namespace, svc.Name, "Echo"))
	}
	return in
}

// GRPCRoute is the GRPCRoute of GRPCGatewayInputs for Service ns/name,
// matching method method of its service.
func GRPCRoute(ns, name, method string) *gwv1.GRPCRoute {
	gwNamespace := gwv1.Namespace("edge")
	port := gwv1.PortNumber(443)
	service := name + ".v1.Echo"
	return &gwv1.GRPCRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1},
		Spec: gwv1.GRPCRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Namespace: &gwNamespace, Name: "web"}}},
			Hostnames:       []gwv1.Hostname{gwv1.Hostname(name + ".example")},
			Rules: []gwv1.GRPCRouteRule{{
				Matches:     []gwv1.GRPCRouteMatch{{Method: &gwv1.GRPCMethodMatch{Service: &service, Method: &method}}},
				BackendRefs: []gwv1.GRPCBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Port: &port}}}},
			}},
		},
	}
}
