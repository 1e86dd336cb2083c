package document

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/tlsplane/tlsplane/translator"
)

// A GRPCRoute with a computed status is printed under grpcroutes, as a v1
// GRPCRoute with that status, beside the HTTPRoute of the same name; a
// document without one has no grpcroutes key, so goldens keep their shape.
func TestRenderGRPCRoutesWithTheirStatus(t *testing.T) {
	shop := types.NamespacedName{Namespace: "edge", Name: "shop"}
	parents := gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{{
		ParentRef: gwv1.ParentReference{Name: "web"}, ControllerName: translator.DefaultControllerName,
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted"}},
	}}}
	in := translator.Inputs{
		HTTPRoutes: []*gwv1.HTTPRoute{{ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "shop"}}},
		GRPCRoutes: []*gwv1.GRPCRoute{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "shop"}, Spec: gwv1.GRPCRouteSpec{Hostnames: []gwv1.Hostname{"grpc.shop.example"}}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "not-ours"}},
		},
	}
	out := translator.Output{GatewayAPI: translator.GatewayAPIStatuses{
		HTTPRoutes: map[types.NamespacedName]gwv1.HTTPRouteStatus{shop: {RouteStatus: parents}},
		GRPCRoutes: map[types.NamespacedName]gwv1.GRPCRouteStatus{shop: {RouteStatus: parents}},
	}}
	raw, err := Render(in, out, FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		HTTPRoutes []gwv1.HTTPRoute `json:"httproutes"`
		GRPCRoutes []gwv1.GRPCRoute `json:"grpcroutes"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.HTTPRoutes) != 1 || doc.HTTPRoutes[0].Kind != "HTTPRoute" {
		t.Errorf("httproutes = %+v, want edge/shop", doc.HTTPRoutes)
	}
	if len(doc.GRPCRoutes) != 1 {
		t.Fatalf("grpcroutes = %+v, want edge/shop alone (not-ours has no status)\n%s", doc.GRPCRoutes, raw)
	}
	g := doc.GRPCRoutes[0]
	if g.APIVersion != "gateway.networking.k8s.io/v1" || g.Kind != "GRPCRoute" || g.Namespace != "edge" || g.Name != "shop" ||
		g.Spec.Hostnames[0] != "grpc.shop.example" || len(g.Status.Parents) != 1 || g.Status.Parents[0].Conditions[0].Reason != "Accepted" {
		t.Errorf("grpcroute = %+v, want the v1 GRPCRoute edge/shop with its spec and computed status", g)
	}

	out.GatewayAPI.GRPCRoutes = nil
	raw, err = Render(in, out, FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "grpcroutes") || !strings.Contains(string(raw), "httproutes:") {
		t.Errorf("without GRPCRoute statuses, the document has a grpcroutes key or lost httproutes:\n%s", raw)
	}
}
