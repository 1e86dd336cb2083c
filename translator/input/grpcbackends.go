package input

import (
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// GRPCBackends counts, per Service port, the backendRefs of GRPCRoutes
// naming it: those ports get a cluster speaking HTTP/2 beside their own
// (plan.GRPCClusterName). Counted from the objects alone, before any
// Gateway rule (a ref no ReferenceGrant permits still counts: the extra
// cluster is harmless, and a grant arriving later needs no recount).
type GRPCBackends map[ServicePort]int

// AddRoute adds (sign 1) or removes (-1) the backendRefs of r; it returns
// the ports whose count went from or to zero.
func (g GRPCBackends) AddRoute(r *gwv1.GRPCRoute, sign int) []ServicePort {
	var flipped []ServicePort
	for _, sp := range GRPCRouteBackends(r) {
		before := g[sp]
		g[sp] += sign
		if g[sp] <= 0 {
			delete(g, sp)
		}
		if (before == 0) != (g[sp] == 0) {
			flipped = append(flipped, sp)
		}
	}
	return flipped
}

// GRPCRouteBackends are the Service ports r's backendRefs name (core
// Services with a port), once each.
func GRPCRouteBackends(r *gwv1.GRPCRoute) []ServicePort {
	var out []ServicePort
	seen := map[ServicePort]bool{}
	for _, rule := range r.Spec.Rules {
		for _, ref := range rule.BackendRefs {
			if (ref.Group != nil && *ref.Group != "") || (ref.Kind != nil && *ref.Kind != "Service") || ref.Port == nil {
				continue
			}
			ns := r.Namespace
			if ref.Namespace != nil {
				ns = string(*ref.Namespace)
			}
			sp := ServicePort{Service: NameOf(ns, string(ref.Name)), Port: int32(*ref.Port)}
			if !seen[sp] {
				seen[sp] = true
				out = append(out, sp)
			}
		}
	}
	return out
}
