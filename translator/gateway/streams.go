package gateway

import (
	"slices"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// TLSRoutes and TCPRoutes carry connections, not requests: a route is its
// one rule's backends, and a listener's filter chain per hostname (TLS,
// chosen by SNI) or its only one (TCP) proxies the connection to them. A
// TLS listener in Passthrough and a TCP listener send it to each Service
// port's raw cluster (plan.RawClusterName: no BackendTLSPolicy applies to a
// client's own TLS); a TLS listener in Terminate ends TLS with its
// certificates and sends the stream to the port's own cluster, which
// re-encrypts it when a policy governs the port.

// judgeTLSRoute judges a TLSRoute's rule.
func judgeTLSRoute(r *gwv1.TLSRoute, ix *input.Index, g *gatewayIndex) *routeState {
	rs := newRouteState(kindTLSRoute, &r.ObjectMeta, r.Spec.CommonRouteSpec, r.Spec.Hostnames, r.Status.RouteStatus)
	rs.judgeStream(input.RulesBackendRefs(r.Spec.Rules, func(rule gwv1.TLSRouteRule) []gwv1.BackendRef { return rule.BackendRefs }), ix, g)
	return rs
}

// judgeTCPRoute judges a TCPRoute's rule; it has no hostnames.
func judgeTCPRoute(r *gwv1.TCPRoute, ix *input.Index, g *gatewayIndex) *routeState {
	rs := newRouteState(kindTCPRoute, &r.ObjectMeta, r.Spec.CommonRouteSpec, nil, r.Status.RouteStatus)
	rs.judgeStream(input.RulesBackendRefs(r.Spec.Rules, func(rule gwv1.TCPRouteRule) []gwv1.BackendRef { return rule.BackendRefs }), ix, g)
	return rs
}

// judgeStream resolves a stream route's backendRefs; those that do not
// resolve keep their weight with no cluster: their share of connections
// is refused.
func (rs *routeState) judgeStream(refs []gwv1.BackendRef, ix *input.Index, g *gatewayIndex) {
	brs := make([]backendRef, 0, len(refs))
	for _, ref := range refs {
		brs = append(brs, backendRef{BackendRef: ref})
	}
	backends, problems := rs.ruleBackends(0, brs, ix, g)
	rs.stream = backends
	if len(problems) > 0 {
		rs.resolvedMsg = strings.Join(problems, "; ")
	}
}

// streamChains plans a TLS or TCP listener's filter chains: one per
// hostname its routes have there (TLS), or one (TCP). Where several routes
// share a hostname, the oldest (then first by namespace/name) serves it.
func streamChains(l *listenerState) []plan.StreamChain {
	var out []plan.StreamChain
	for _, h := range input.SortedNames(l.byHost) {
		routes := slices.Clone(l.byHost[h])
		slices.SortFunc(routes, func(a, b *routeState) int {
			if olderFirst(a, b) {
				return -1
			}
			return 1
		})
		c := plan.StreamChain{Name: l.chainName(), Backends: streamBackends(l, routes[0].stream)}
		if h != "*" {
			c.Name = plan.StreamChainName(c.Name, h)
			c.ServerNames = []string{h}
		}
		if !l.passthrough && l.spec.Protocol == gwv1.TLSProtocolType {
			c.CertSecrets = l.certSecrets
		}
		out = append(out, c)
	}
	return out
}

// streamBackends are the clusters a listener proxies a route's
// connections to: the raw ones unless the listener terminates TLS.
func streamBackends(l *listenerState, backends []plan.WeightedBackend) []plan.WeightedBackend {
	if l.spec.Protocol == gwv1.TLSProtocolType && !l.passthrough {
		return backends
	}
	out := make([]plan.WeightedBackend, 0, len(backends))
	for _, b := range backends {
		if b.Cluster != "" {
			b.Cluster = plan.RawOf(b.Cluster)
		}
		out = append(out, b)
	}
	return out
}
