package route

import (
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
)

// JudgeMeshHTTPRoute is JudgeHTTPRoute for an HTTPRoute's Service parents
// (package mesh): backendRefs in any namespace resolve without a
// ReferenceGrant, since a mesh route augments a Service every caller can
// already reach rather than exposing it (GEP-1426, "Namespace
// boundaries"). Its hostnames are kept but mean nothing there (GEP-1294).
func JudgeMeshHTTPRoute(r *gwv1.HTTPRoute, ix *input.Index) *Route {
	rs := newRoute(input.KindHTTPRoute, &r.ObjectMeta, r.Spec.CommonRouteSpec, r.Spec.Hostnames, r.Status.RouteStatus)
	rs.mesh = true
	rs.judgeHTTPRules(r, ix, nil)
	return rs
}

// JudgeMeshGRPCRoute is JudgeGRPCRoute for a GRPCRoute's Service
// parents, with JudgeMeshHTTPRoute's rule for backendRefs.
func JudgeMeshGRPCRoute(r *gwv1.GRPCRoute, ix *input.Index) *Route {
	rs := newRoute(input.KindGRPCRoute, &r.ObjectMeta, r.Spec.CommonRouteSpec, r.Spec.Hostnames, r.Status.RouteStatus)
	rs.mesh = true
	rs.judgeGRPCRules(r, ix, nil)
	return rs
}
