package document

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/tlsplane/tlsplane/translator"
)

// A GRPCRoute, TLSRoute or TCPRoute with a computed status is printed
// under its kind's key, as a v1 route of that kind with that status,
// beside the HTTPRoute of the same name; a document without one has no
// key for the kind, so goldens keep their shape.
func TestRenderRoutesOfEachKindWithTheirStatus(t *testing.T) {
	shop := types.NamespacedName{Namespace: "edge", Name: "shop"}
	parents := func(reason string) gwv1.RouteStatus {
		return gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{{
			ParentRef: gwv1.ParentReference{Name: "web"}, ControllerName: translator.DefaultControllerName,
			Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: reason}},
		}}}
	}
	shopMeta, notOurs := metav1.ObjectMeta{Namespace: "edge", Name: "shop"}, metav1.ObjectMeta{Namespace: "edge", Name: "not-ours"}
	in := translator.Inputs{
		HTTPRoutes: []*gwv1.HTTPRoute{{ObjectMeta: shopMeta}},
		GRPCRoutes: []*gwv1.GRPCRoute{{ObjectMeta: shopMeta, Spec: gwv1.GRPCRouteSpec{Hostnames: []gwv1.Hostname{"grpc.shop.example"}}}, {ObjectMeta: notOurs}},
		TLSRoutes:  []*gwv1.TLSRoute{{ObjectMeta: shopMeta, Spec: gwv1.TLSRouteSpec{Hostnames: []gwv1.Hostname{"vault.shop.example"}}}, {ObjectMeta: notOurs}},
		TCPRoutes: []*gwv1.TCPRoute{{ObjectMeta: shopMeta, Spec: gwv1.TCPRouteSpec{Rules: []gwv1.TCPRouteRule{{
			BackendRefs: []gwv1.BackendRef{{BackendObjectReference: gwv1.BackendObjectReference{Name: "postgres"}}}}}}}, {ObjectMeta: notOurs}},
	}
	out := translator.Output{GatewayAPI: translator.GatewayAPIStatuses{
		RouteStatusMaps: translator.RouteStatusMaps{
			HTTPRoutes: map[types.NamespacedName]gwv1.HTTPRouteStatus{shop: {RouteStatus: parents("Accepted")}},
			GRPCRoutes: map[types.NamespacedName]gwv1.GRPCRouteStatus{shop: {RouteStatus: parents("gRPC")}},
			TLSRoutes:  map[types.NamespacedName]gwv1.TLSRouteStatus{shop: {RouteStatus: parents("TLS")}},
			TCPRoutes:  map[types.NamespacedName]gwv1.TCPRouteStatus{shop: {RouteStatus: parents("TCP")}},
		},
	}}
	raw, err := Render(in, out, FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	// The route kinds' statuses are each a RouteStatus: one shape reads
	// them all.
	type route struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta `json:"metadata"`
		Spec            any               `json:"spec"`
		Status          gwv1.RouteStatus  `json:"status"`
	}
	var doc map[string][]route
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if r := doc["httproutes"]; len(r) != 1 || r[0].Kind != "HTTPRoute" || r[0].Status.Parents[0].Conditions[0].Reason != "Accepted" {
		t.Errorf("httproutes = %+v, want edge/shop", r)
	}
	for _, c := range []struct{ key, kind, reason, spec string }{
		{"grpcroutes", "GRPCRoute", "gRPC", "grpc.shop.example"},
		{"tlsroutes", "TLSRoute", "TLS", "vault.shop.example"},
		{"tcproutes", "TCPRoute", "TCP", "postgres"},
	} {
		r := doc[c.key]
		if len(r) != 1 {
			t.Errorf("%s = %+v, want edge/shop alone (not-ours has no status)\n%s", c.key, r, raw)
			continue
		}
		if r[0].APIVersion != "gateway.networking.k8s.io/v1" || r[0].Kind != c.kind || r[0].Metadata.Namespace != "edge" || r[0].Metadata.Name != "shop" ||
			!strings.Contains(fmt.Sprint(r[0].Spec), c.spec) || len(r[0].Status.Parents) != 1 || r[0].Status.Parents[0].Conditions[0].Reason != c.reason {
			t.Errorf("%s = %+v, want the v1 %s edge/shop with its spec (%s) and computed status (%s)", c.key, r[0], c.kind, c.spec, c.reason)
		}
	}

	out.GatewayAPI.GRPCRoutes, out.GatewayAPI.TLSRoutes, out.GatewayAPI.TCPRoutes = nil, nil, nil
	raw, err = Render(in, out, FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"grpcroutes", "tlsroutes", "tcproutes"} {
		if strings.Contains(string(raw), key) {
			t.Errorf("without its kind's statuses, the document has a %s key:\n%s", key, raw)
		}
	}
	if !strings.Contains(string(raw), "httproutes:") {
		t.Errorf("the document lost httproutes:\n%s", raw)
	}
}
