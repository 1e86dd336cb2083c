package input

import (
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// RouteBackends counts, per Service port, the backendRefs of one family of
// routes naming it (RouteKind.Backends says which family a route kind
// counts in); the Index keeps one for gRPC routes (those ports get a
// cluster speaking HTTP/2, plan.GRPCClusterName) and one for TLS and TCP
// routes (a raw cluster, plan.RawClusterName), each beside the port's
// own, and one for UDP routes (the UDP port's only cluster,
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
