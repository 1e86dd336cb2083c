package gateway

import (
	"fmt"

	"regexp"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// routeKind is the kind of a route: HTTPRoute or GRPCRoute.
type routeKind string

const (
	kindHTTPRoute routeKind = "HTTPRoute"
	kindGRPCRoute routeKind = "GRPCRoute"
	kindTLSRoute  routeKind = "TLSRoute"
	kindTCPRoute  routeKind = "TCPRoute"
	kindUDPRoute  routeKind = "UDPRoute"
)

// routeKey names a route: kinds have names of their own.
type routeKey struct {
	kind routeKind
	nn   types.NamespacedName
}

// routeState is one route as judged: its rules as Envoy routes (without
// hostnames, which depend on the listener), and the route-wide verdicts.
// What attaching and status read of the object is copied out of it, so
// both kinds go through the same rules.
type routeState struct {
	kind        routeKind
	meta        *metav1.ObjectMeta
	nn          types.NamespacedName
	hostnames   []gwv1.Hostname
	parentRefs  []gwv1.ParentReference
	prevParents []gwv1.RouteParentStatus // the object's status.parents
	plans       []rankedRoute
	// stream are a TLSRoute's, TCPRoute's or UDPRoute's backends.
	stream []plan.WeightedBackend
	// resolvedReason is "" when every backendRef resolved; resolvedMsg
	// names each that did not.
	resolvedReason, resolvedMsg string
	// unsupported names what tlsplane does not serve (a filter, a bad
	// regular expression); those rules answer 500.
	unsupported []string
	// backends are the Service ports the route sends TCP traffic to: the
	// reach of policies and client certificates.
	backends []input.ServicePort
}

// rankedRoute is a route plan with what orders it among others.
type rankedRoute struct {
	plan plan.Route
	rank routeRank
}

func newRouteState(kind routeKind, meta *metav1.ObjectMeta, spec gwv1.CommonRouteSpec, hostnames []gwv1.Hostname, status gwv1.RouteStatus) *routeState {
	return &routeState{kind: kind, meta: meta, nn: input.NameOf(meta.Namespace, meta.Name),
		hostnames: hostnames, parentRefs: spec.ParentRefs, prevParents: status.Parents}
}

func (rs *routeState) key() routeKey { return routeKey{rs.kind, rs.nn} }

// transport is the Service port protocol the kind's backends must have.
func (k routeKind) transport() corev1.Protocol {
	if k == kindUDPRoute {
		return corev1.ProtocolUDP
	}
	return corev1.ProtocolTCP
}

// judgeRoute translates every rule and match of an HTTPRoute.
func judgeRoute(r *gwv1.HTTPRoute, ix *input.Index, g *gatewayIndex) *routeState {
	rs := newRouteState(kindHTTPRoute, &r.ObjectMeta, r.Spec.CommonRouteSpec, r.Spec.Hostnames, r.Status.RouteStatus)
	var problems []string
	for i, rule := range r.Spec.Rules {
		base := plan.Route{}
		var unsupported bool
		unsupported, problems = rs.ruleFilters(i, rule.Filters, &base, ix, g, problems)
		if rule.Retry != nil {
			if retry, timeout, err := ruleRetry(rule.Retry, rule.Timeouts); err != nil {
				unsupported = true
				rs.unsupported = append(rs.unsupported, fmt.Sprintf("rules[%d].retry: %v", i, err))
			} else {
				base.Retry, base.Timeout = retry, timeout
			}
		} else if timeout, err := ruleTimeout(rule.Timeouts); err != nil {
			unsupported = true
			rs.unsupported = append(rs.unsupported, fmt.Sprintf("rules[%d].timeouts: %v", i, err))
		} else {
			base.Timeout = timeout
		}
		backends, ruleProblems := rs.ruleBackends(i, httpBackendRefs(rule.BackendRefs), ix, g)
		problems = append(problems, ruleProblems...)
		sendTo(&base, backends, unsupported)
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gwv1.HTTPRouteMatch{{}}
		}
		for j, m := range matches {
			p := base
			p.Name = plan.HTTPRouteMatchName(rs.nn.Namespace, rs.nn.Name, i, j)
			mp, err := matchOf(m)
			if err != nil {
				rs.unsupported = append(rs.unsupported, fmt.Sprintf("rules[%d].matches[%d]: %v", i, j, err))
				continue
			}
			p.Match = mp
			if p.Rewrite != nil && p.Rewrite.Prefix != nil && mp.PathKind != plan.PathPrefix {
				// The CRD refuses this; a route that slipped past it answers 500.
				rs.unsupported = append(rs.unsupported, fmt.Sprintf("rules[%d].matches[%d]: ReplacePrefixMatch needs a PathPrefix match", i, j))
				p.Direct500, p.Backends = true, nil
			}
			rs.plans = append(rs.plans, rankedRoute{plan: p, rank: rs.rankOf(mp, i, j)})
		}
	}
	if len(problems) > 0 {
		rs.resolvedMsg = strings.Join(problems, "; ")
	}
	return rs
}

// ruleFilters applies a rule's filters to p; it reports whether one is
// not supported (the rule then answers 500: a filter is never skipped),
// and adds to problems the mirrors whose backendRef did not resolve.
func (rs *routeState) ruleFilters(i int, filters []gwv1.HTTPRouteFilter, p *plan.Route, ix *input.Index, g *gatewayIndex, problems []string) (bool, []string) {
	unsupported := false
	for k, f := range filters {
		switch {
		case f.Type == gwv1.HTTPRouteFilterRequestHeaderModifier && f.RequestHeaderModifier != nil:
			p.RequestHeaders = headerEditsOf(f.RequestHeaderModifier)
		case f.Type == gwv1.HTTPRouteFilterResponseHeaderModifier && f.ResponseHeaderModifier != nil:
			p.ResponseHeaders = headerEditsOf(f.ResponseHeaderModifier)
		case f.Type == gwv1.HTTPRouteFilterRequestRedirect && f.RequestRedirect != nil:
			p.Redirect = redirectOf(f.RequestRedirect)
		case f.Type == gwv1.HTTPRouteFilterURLRewrite && f.URLRewrite != nil:
			p.Rewrite = rewriteOf(f.URLRewrite)
		case f.Type == gwv1.HTTPRouteFilterRequestMirror && f.RequestMirror != nil:
			m, problem, err := rs.ruleMirror(i, k, f.RequestMirror, ix, g)
			switch {
			case err != nil:
				unsupported = true
				rs.unsupported = append(rs.unsupported, fmt.Sprintf("rules[%d].filters[%d].%v", i, k, err))
			case problem != "":
				problems = append(problems, problem)
			default:
				p.Mirrors = append(p.Mirrors, *m)
			}
		case f.Type == gwv1.HTTPRouteFilterCORS && f.CORS != nil:
			if err := ruleCORS(i, k, f.CORS, p); err != "" {
				unsupported = true
				rs.unsupported = append(rs.unsupported, err)
			}
		default:
			unsupported = true
			rs.unsupported = append(rs.unsupported, fmt.Sprintf("rules[%d].filters[%d]: type %q is not supported", i, k, f.Type))
		}
	}
	return unsupported, problems
}

// sendTo makes a rule's route send to its backends, or answer 500 when a
// filter is not supported or no backend is valid; a redirect needs none.
func sendTo(p *plan.Route, backends []plan.WeightedBackend, unsupported bool) {
	switch {
	case unsupported:
		p.Direct500 = true
	case p.Redirect != nil:
	case !anyValid(backends):
		p.Direct500 = true
	default:
		p.Backends = backends
	}
}

func anyValid(backends []plan.WeightedBackend) bool {
	for _, b := range backends {
		if b.Cluster != "" {
			return true
		}
	}
	return false
}

func headerEditsOf(f *gwv1.HTTPHeaderFilter) plan.HeaderEdits {
	var h plan.HeaderEdits
	for _, s := range f.Set {
		h.Set = append(h.Set, plan.HeaderValue{Name: string(s.Name), Value: s.Value})
	}
	for _, a := range f.Add {
		h.Add = append(h.Add, plan.HeaderValue{Name: string(a.Name), Value: a.Value})
	}
	h.Remove = append(h.Remove, f.Remove...)
	return h
}

// ruleTimeout is the bound on one request to a backend: without retries a
// request makes one backend request, so it is the smaller of request and
// backendRequest; "0s" disables either.
func ruleTimeout(t *gwv1.HTTPRouteTimeouts) (*time.Duration, error) {
	if t == nil {
		return nil, nil
	}
	var bound *time.Duration
	for _, d := range []*gwv1.Duration{t.Request, t.BackendRequest} {
		if d == nil {
			continue
		}
		v, err := time.ParseDuration(string(*d))
		if err != nil {
			return nil, fmt.Errorf("duration %q: %v", *d, err)
		}
		if bound == nil || *bound == 0 || (v != 0 && v < *bound) {
			bound = &v
		}
	}
	return bound, nil
}

// pathModifierOf is a redirect's or rewrite's path: a full replacement, or
// the replacement of the matched prefix; neither when p is nil.
func pathModifierOf(p *gwv1.HTTPPathModifier) (fullPath string, prefix *string) {
	switch {
	case p == nil:
	case p.Type == gwv1.FullPathHTTPPathModifier && p.ReplaceFullPath != nil:
		fullPath = *p.ReplaceFullPath
	case p.Type == gwv1.PrefixMatchHTTPPathModifier && p.ReplacePrefixMatch != nil:
		prefix = p.ReplacePrefixMatch
	}
	return fullPath, prefix
}

func rewriteOf(f *gwv1.HTTPURLRewriteFilter) *plan.Rewrite {
	r := &plan.Rewrite{}
	if f.Hostname != nil {
		r.Host = string(*f.Hostname)
	}
	r.FullPath, r.Prefix = pathModifierOf(f.Path)
	return r
}

func redirectOf(f *gwv1.HTTPRequestRedirectFilter) *plan.Redirect {
	r := &plan.Redirect{Code: 302}
	if f.Scheme != nil {
		r.Scheme = *f.Scheme
	}
	if f.Hostname != nil {
		r.Host = string(*f.Hostname)
	}
	if f.Port != nil {
		r.Port = uint32(*f.Port)
	}
	if f.StatusCode != nil {
		r.Code = *f.StatusCode
	}
	r.FullPath, r.Prefix = pathModifierOf(f.Path)
	return r
}

// backendRef is what a rule's backendRef says, of either route kind.
type backendRef struct {
	gwv1.BackendRef
	filters []gwv1.HTTPRouteFilter // GRPCRoute filters as their HTTPRoute twins
}

func httpBackendRefs(refs []gwv1.HTTPBackendRef) []backendRef {
	out := make([]backendRef, 0, len(refs))
	for _, r := range refs {
		out = append(out, backendRef{BackendRef: r.BackendRef, filters: r.Filters})
	}
	return out
}

// ruleBackends resolves a rule's backendRefs. An unresolved ref keeps its
// weight, with no cluster: its share of requests is answered 500. Refs of
// weight 0 are left out; none left means the rule answers 500.
func (rs *routeState) ruleBackends(i int, refs []backendRef, ix *input.Index, g *gatewayIndex) ([]plan.WeightedBackend, []string) {
	var out []plan.WeightedBackend
	var problems []string
	for k, ref := range refs {
		weight := int32(1)
		if ref.Weight != nil {
			weight = *ref.Weight
		}
		cluster, reason, msg := rs.resolveBackend(ref.BackendObjectReference, ix, g)
		if reason != "" {
			if rs.resolvedReason == "" {
				rs.resolvedReason = reason
			}
			problems = append(problems, fmt.Sprintf("rules[%d].backendRefs[%d]: %s", i, k, msg))
			cluster = ""
		}
		b := plan.WeightedBackend{Cluster: cluster, Weight: uint32(weight)}
		for f, filter := range ref.filters {
			switch {
			case filter.Type == gwv1.HTTPRouteFilterRequestHeaderModifier && filter.RequestHeaderModifier != nil:
				b.RequestHeaders = headerEditsOf(filter.RequestHeaderModifier)
			case filter.Type == gwv1.HTTPRouteFilterResponseHeaderModifier && filter.ResponseHeaderModifier != nil:
				b.ResponseHeaders = headerEditsOf(filter.ResponseHeaderModifier)
			default:
				// Never skipped: this backend's share is answered 500.
				rs.unsupported = append(rs.unsupported, fmt.Sprintf("rules[%d].backendRefs[%d].filters[%d]: type %q is not supported on a backend", i, k, f, filter.Type))
				b.Cluster = ""
			}
		}
		if weight > 0 {
			out = append(out, b)
		}
	}
	return out, problems
}

// resolveBackend finds the cluster of a backendRef, or says why there is
// none with the spec's reason.
func (rs *routeState) resolveBackend(ref gwv1.BackendObjectReference, ix *input.Index, g *gatewayIndex) (string, string, string) {
	group, kind := "", "Service"
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	ns := rs.nn.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	if group != "" || kind != "Service" {
		return "", string(gwv1.RouteReasonInvalidKind), fmt.Sprintf("group %q kind %q: only core Services are backends", group, kind)
	}
	nn := types.NamespacedName{Namespace: ns, Name: string(ref.Name)}
	if !g.permitted(reference{gwv1.GroupName, string(rs.kind), rs.nn.Namespace, "", "Service", ns, string(ref.Name)}) {
		return "", string(gwv1.RouteReasonRefNotPermitted), fmt.Sprintf("Service %s: no ReferenceGrant in %s permits %ss of %s", nn, ns, rs.kind, rs.nn.Namespace)
	}
	svc, ok := ix.Services[nn]
	if !ok {
		return "", string(gwv1.RouteReasonBackendNotFound), fmt.Sprintf("Service %s does not exist", nn)
	}
	if ref.Port == nil {
		return "", string(gwv1.RouteReasonUnsupportedValue), fmt.Sprintf("Service %s: port is required", nn)
	}
	// A number may be a TCP and a UDP port (DNS): the route's transport
	// picks one; only when there is none is the port's protocol wrong.
	want, other := rs.kind.transport(), corev1.Protocol("")
	for _, p := range svc.Spec.Ports {
		if p.Port != int32(*ref.Port) {
			continue
		}
		if input.ProtocolOrTCP(p.Protocol) != want {
			other = input.ProtocolOrTCP(p.Protocol)
			continue
		}
		switch rs.kind {
		case kindGRPCRoute:
			rs.backends = append(rs.backends, input.ServicePort{Service: nn, Port: p.Port})
			return plan.GRPCClusterName(nn.Namespace, nn.Name, p.Port), "", ""
		case kindUDPRoute:
			// Not a reach: backends are what BackendTLSPolicies and client
			// certificates apply to, by port number, and neither applies to
			// UDP (a TCP port of the same number is not reached).
			return plan.UDPClusterName(nn.Namespace, nn.Name, p.Port), "", ""
		}
		rs.backends = append(rs.backends, input.ServicePort{Service: nn, Port: p.Port})
		return plan.ClusterName(nn.Namespace, nn.Name, p.Port), "", ""
	}
	if other != "" {
		return "", string(gwv1.RouteReasonUnsupportedProtocol), fmt.Sprintf("Service %s port %d is %s; a %s needs %s", nn, *ref.Port, other, rs.kind, want)
	}
	return "", string(gwv1.RouteReasonBackendNotFound), fmt.Sprintf("Service %s has no port %d", nn, *ref.Port)
}

// matchOf is one HTTPRouteMatch with the API's defaults: PathPrefix "/",
// Exact headers and query parameters.
func matchOf(m gwv1.HTTPRouteMatch) (plan.Match, error) {
	mp := plan.Match{PathKind: plan.PathPrefix, Path: "/"}
	if m.Path != nil {
		if m.Path.Value != nil {
			mp.Path = *m.Path.Value
		}
		if m.Path.Type != nil {
			switch *m.Path.Type {
			case gwv1.PathMatchExact:
				mp.PathKind = plan.PathExact
			case gwv1.PathMatchRegularExpression:
				mp.PathKind = plan.PathRegex
				if _, err := regexp.Compile(mp.Path); err != nil {
					return mp, fmt.Errorf("path %q: %v", mp.Path, err)
				}
			}
		}
	}
	if mp.PathKind == plan.PathPrefix && mp.Path != "/" {
		// "/foo/" matches as "/foo": the spec ignores a trailing slash.
		mp.Path = strings.TrimRight(mp.Path, "/")
		if mp.Path == "" {
			mp.Path = "/"
		}
	}
	seen := map[string]bool{}
	for _, h := range m.Headers {
		name := strings.ToLower(string(h.Name))
		if seen[name] {
			continue // the spec: the first of equal names wins
		}
		seen[name] = true
		regex := h.Type != nil && *h.Type == gwv1.HeaderMatchRegularExpression
		if regex {
			if _, err := regexp.Compile(h.Value); err != nil {
				return mp, fmt.Errorf("header %s %q: %v", h.Name, h.Value, err)
			}
		}
		mp.Headers = append(mp.Headers, plan.ValueMatch{Name: name, Value: h.Value, Regex: regex})
	}
	seenQuery := map[string]bool{}
	for _, q := range m.QueryParams {
		if seenQuery[string(q.Name)] {
			continue
		}
		seenQuery[string(q.Name)] = true
		regex := q.Type != nil && *q.Type == gwv1.QueryParamMatchRegularExpression
		if regex {
			if _, err := regexp.Compile(q.Value); err != nil {
				return mp, fmt.Errorf("query parameter %s %q: %v", q.Name, q.Value, err)
			}
		}
		mp.Query = append(mp.Query, plan.ValueMatch{Name: string(q.Name), Value: q.Value, Regex: regex})
	}
	if m.Method != nil {
		mp.Method = string(*m.Method)
	}
	return mp, nil
}
