package gateway

import (
	"slices"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/route"
)

// A TLS or TCP listener's filter chain per hostname (TLS, chosen by SNI)
// or its only one (TCP) proxies a connection to its route's backends
// (route/streams.go judges them). A TLS listener in Passthrough and a TCP
// listener send it to each Service port's raw cluster
// (plan.RawClusterName: no BackendTLSPolicy applies to a client's own
// TLS); a TLS listener in Terminate ends TLS with its certificates and
// sends the stream to the port's own cluster, which re-encrypts it when a
// policy governs the port.

// streamChains plans a TLS or TCP listener's filter chains: one per
// hostname its routes have there (TLS), or one (TCP). Where several routes
// share a hostname, the oldest (then first by namespace/name) serves it.
func streamChains(l *listenerState) []plan.StreamChain {
	var out []plan.StreamChain
	for _, h := range input.SortedNames(l.byHost) {
		routes := slices.Clone(l.byHost[h])
		slices.SortFunc(routes, func(a, b *route.Route) int {
			if route.OlderFirst(a, b) {
				return -1
			}
			return 1
		})
		c := plan.StreamChain{Name: l.chainName(), Backends: routes[0].StreamBackends(l.raw())}
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

// raw: the listener proxies connections as they come (a TLS listener in
// Passthrough, a TCP listener), to the raw clusters (plan.RawOf).
func (l *listenerState) raw() bool { return l.spec.Protocol != gwv1.TLSProtocolType || l.passthrough }
