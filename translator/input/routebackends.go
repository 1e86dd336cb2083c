package input

import (
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// RouteBackends counts, per Service port, the backendRefs of one family of
// routes naming it; the Index keeps one for GRPCRoutes (those ports get a
// cluster speaking HTTP/2, plan.GRPCClusterName) and one for TLSRoutes and
// TCPRoutes (a raw cluster, plan.RawClusterName), each beside the port's
// own, and one for UDPRoutes (the UDP port's only cluster,
// plan.UDPClusterName). Counted from the objects alone, before any Gateway rule: a ref no
// ReferenceGrant permits still counts (the extra cluster is harmless, and
// a grant arriving later needs no recount).
type RouteBackends map[ServicePort]int

// Add counts (sign 1) or discounts (-1) ports, returning those whose count
// went from or to zero.
func (g RouteBackends) Add(ports []ServicePort, sign int) []ServicePort {
	var flipped []ServicePort
	for _, sp := range ports {
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

// GRPCRouteBackends are the Service ports a GRPCRoute's backendRefs name.
func GRPCRouteBackends(r *gwv1.GRPCRoute) []ServicePort {
	var refs []gwv1.BackendRef
	for _, rule := range r.Spec.Rules {
		for _, ref := range rule.BackendRefs {
			refs = append(refs, ref.BackendRef)
		}
	}
	return servicePortsOf(r.Namespace, refs)
}

// TLSRouteBackends are the Service ports a TLSRoute's backendRefs name.
func TLSRouteBackends(r *gwv1.TLSRoute) []ServicePort {
	return servicePortsOf(r.Namespace, RulesBackendRefs(r.Spec.Rules, func(rule gwv1.TLSRouteRule) []gwv1.BackendRef { return rule.BackendRefs }))
}

// TCPRouteBackends are the Service ports a TCPRoute's backendRefs name.
func TCPRouteBackends(r *gwv1.TCPRoute) []ServicePort {
	return servicePortsOf(r.Namespace, RulesBackendRefs(r.Spec.Rules, func(rule gwv1.TCPRouteRule) []gwv1.BackendRef { return rule.BackendRefs }))
}

// UDPRouteBackends are the Service ports a UDPRoute's backendRefs name.
func UDPRouteBackends(r *gwv1.UDPRoute) []ServicePort {
	return servicePortsOf(r.Namespace, RulesBackendRefs(r.Spec.Rules, func(rule gwv1.UDPRouteRule) []gwv1.BackendRef { return rule.BackendRefs }))
}

// RulesBackendRefs are the backendRefs of a stream route's rules, in order.
func RulesBackendRefs[R any](rules []R, refs func(R) []gwv1.BackendRef) []gwv1.BackendRef {
	var out []gwv1.BackendRef
	for _, rule := range rules {
		out = append(out, refs(rule)...)
	}
	return out
}

// servicePortsOf are the Service ports refs name (core Services with a
// port) from a route of namespace, once each.
func servicePortsOf(namespace string, refs []gwv1.BackendRef) []ServicePort {
	var out []ServicePort
	seen := map[ServicePort]bool{}
	for _, ref := range refs {
		if (ref.Group != nil && *ref.Group != "") || (ref.Kind != nil && *ref.Kind != "Service") || ref.Port == nil {
			continue
		}
		ns := namespace
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		sp := ServicePort{Service: NameOf(ns, string(ref.Name)), Port: int32(*ref.Port)}
		if !seen[sp] {
			seen[sp] = true
			out = append(out, sp)
		}
	}
	return out
}
