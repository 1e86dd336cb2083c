package route

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/referencegrant"
)

// TLSRoutes and TCPRoutes carry connections, not requests: a route is its
// one rule's backends, which the listeners it attaches to proxy the
// connection to (gateway/streamchains.go).

// JudgeTLSRoute judges a TLSRoute's rule.
func JudgeTLSRoute(r *gwv1.TLSRoute, ix *input.Index, grants referencegrant.Grants) *Route {
	rs := newRoute(input.KindTLSRoute, &r.ObjectMeta, r.Spec.CommonRouteSpec, r.Spec.Hostnames, r.Status.RouteStatus)
	rs.judgeStream(input.RulesBackendRefs(r.Spec.Rules, func(rule gwv1.TLSRouteRule) []gwv1.BackendRef { return rule.BackendRefs }), ix, grants)
	return rs
}

// JudgeTCPRoute judges a TCPRoute's rule; it has no hostnames.
func JudgeTCPRoute(r *gwv1.TCPRoute, ix *input.Index, grants referencegrant.Grants) *Route {
	rs := newRoute(input.KindTCPRoute, &r.ObjectMeta, r.Spec.CommonRouteSpec, nil, r.Status.RouteStatus)
	rs.judgeStream(input.RulesBackendRefs(r.Spec.Rules, func(rule gwv1.TCPRouteRule) []gwv1.BackendRef { return rule.BackendRefs }), ix, grants)
	return rs
}

// judgeStream resolves a stream route's backendRefs; those that do not
// resolve keep their weight with no cluster: their share of connections
// is refused.
func (rs *Route) judgeStream(refs []gwv1.BackendRef, ix *input.Index, grants referencegrant.Grants) {
	brs := make([]backendRef, 0, len(refs))
	for _, ref := range refs {
		brs = append(brs, backendRef{BackendRef: ref})
	}
	backends, problems := rs.ruleBackends(0, brs, ix, grants)
	rs.Stream = backends
	if len(problems) > 0 {
		rs.ResolvedMsg = strings.Join(problems, "; ")
	}
}

// UDPRoutes carry datagrams: a route is its rules' backends (UDP ports of
// Services), to which a UDP listener proxies each client session
// (gateway/udpports.go).

// JudgeStream judges a stream route of any kind (input.RouteKind.Streams);
// nil for another object.
func JudgeStream(o metav1.Object, ix *input.Index, grants referencegrant.Grants) *Route {
	switch r := o.(type) {
	case *gwv1.TLSRoute:
		return JudgeTLSRoute(r, ix, grants)
	case *gwv1.TCPRoute:
		return JudgeTCPRoute(r, ix, grants)
	case *gwv1.UDPRoute:
		return JudgeUDPRoute(r, ix, grants)
	}
	return nil
}

// JudgeUDPRoute judges a UDPRoute's rules; it has no hostnames.
func JudgeUDPRoute(r *gwv1.UDPRoute, ix *input.Index, grants referencegrant.Grants) *Route {
	rs := newRoute(input.KindUDPRoute, &r.ObjectMeta, r.Spec.CommonRouteSpec, nil, r.Status.RouteStatus)
	rs.judgeStream(input.RulesBackendRefs(r.Spec.Rules, func(rule gwv1.UDPRouteRule) []gwv1.BackendRef { return rule.BackendRefs }), ix, grants)
	return rs
}

// StreamBackends are the backends a listener proxies the route's
// connections to: Stream, or their raw clusters when raw (a listener that
// does not terminate TLS). An XBackend's stream always goes to its raw
// cluster, which has its TLS without ALPN: its HTTP cluster offers h2
// when spec.protocol is unset, and a backend choosing h2 would read the
// client's stream (after a terminating TLS listener) as HTTP/2.
func (rs *Route) StreamBackends(raw bool) []plan.WeightedBackend {
	if !raw && len(rs.xbackendStreams) == 0 {
		return rs.Stream
	}
	out := make([]plan.WeightedBackend, 0, len(rs.Stream))
	for _, b := range rs.Stream {
		if _, refused := rs.passthroughRefused[b.Cluster]; raw && refused {
			b.Cluster = "" // its share is refused
		}
		if b.Cluster != "" && (raw || rs.xbackendStreams[b.Cluster]) {
			b.Cluster = plan.RawOf(b.Cluster)
		}
		out = append(out, b)
	}
	return out
}

// Clusters are the clusters the route sends traffic to through a
// listener, as the emitter names them: each rule's backends and mirrors
// (HTTP, GRPC), the stream backends, raw when raw (TLS, TCP), or the UDP
// ports' clusters (UDP). Invalid backends (no cluster) are left out.
func (rs *Route) Clusters(raw bool) []string {
	var out []string
	add := func(bs []plan.WeightedBackend) {
		for _, b := range bs {
			if b.Cluster != "" {
				out = append(out, b.Cluster)
			}
		}
	}
	switch rs.Kind {
	case input.KindTLSRoute, input.KindTCPRoute:
		add(rs.StreamBackends(raw))
	case input.KindUDPRoute:
		add(rs.Stream)
	default:
		for _, r := range rs.Plans {
			add(r.Plan.Backends)
			for _, m := range r.Plan.Mirrors {
				if m.Cluster != "" {
					out = append(out, m.Cluster)
				}
			}
		}
	}
	return out
}
