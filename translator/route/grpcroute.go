package route

import (
	"fmt"
	"regexp"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/referencegrant"
)

// A GRPCRoute becomes Envoy routes on the same virtual hosts as HTTPRoutes:
// a gRPC call is an HTTP/2 POST to /<service>/<method>, so a method match
// is a path match, and every route matches gRPC requests only (Envoy's
// `grpc` route match: content-type application/grpc). Its backends are the
// Service ports' HTTP/2 clusters (plan.GRPCClusterName).

// JudgeGRPCRoute translates every rule and match of a GRPCRoute: its
// filters, backends and method matches (judgeRule).
func JudgeGRPCRoute(r *gwv1.GRPCRoute, ix *input.Index, grants referencegrant.Grants) *Route {
	rs := newRoute(input.KindGRPCRoute, &r.ObjectMeta, r.Spec.CommonRouteSpec, r.Spec.Hostnames, r.Status.RouteStatus)
	rs.judgeGRPCRules(r, ix, grants)
	return rs
}

// judgeGRPCRules judges a GRPCRoute's rules into rs.
func (rs *Route) judgeGRPCRules(r *gwv1.GRPCRoute, ix *input.Index, grants referencegrant.Grants) {
	var problems []string
	for i, gr := range r.Spec.Rules {
		problems = judgeRule(rs, i, rule[gwv1.GRPCRouteMatch]{
			filters:  grpcFilters(gr.Filters),
			backends: grpcBackendRefs(gr.BackendRefs),
			matches:  gr.Matches,
			name:     plan.GRPCRouteMatchName,
			match:    rs.grpcMatch,
		}, ix, grants, problems)
	}
	rs.resolved(problems)
}

// grpcMatch sets match j of rule i on p, ranked by service, method and
// headers.
func (rs *Route) grpcMatch(p *plan.Route, i, j int, m gwv1.GRPCRouteMatch) (Rank, error) {
	mp, service, method, err := grpcMatchOf(m)
	if err != nil {
		return Rank{}, err
	}
	p.Match = mp
	return rs.grpcRankOf(service, method, len(mp.Headers), i, j), nil
}

func grpcBackendRefs(refs []gwv1.GRPCBackendRef) []backendRef {
	out := make([]backendRef, 0, len(refs))
	for _, ref := range refs {
		out = append(out, backendRef{BackendRef: ref.BackendRef, filters: grpcFilters(ref.Filters)})
	}
	return out
}

// grpcFilters are GRPCRoute filters as the HTTPRoute filters of the same
// meaning; a type without one keeps its type and no value, so ruleFilters
// reports it unsupported (RequestMirror, ExtensionRef).
func grpcFilters(in []gwv1.GRPCRouteFilter) []gwv1.HTTPRouteFilter {
	out := make([]gwv1.HTTPRouteFilter, 0, len(in))
	for _, f := range in {
		h := gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterType(f.Type)}
		switch f.Type {
		case gwv1.GRPCRouteFilterRequestHeaderModifier:
			h.RequestHeaderModifier = f.RequestHeaderModifier
		case gwv1.GRPCRouteFilterResponseHeaderModifier:
			h.ResponseHeaderModifier = f.ResponseHeaderModifier
		}
		out = append(out, h)
	}
	return out
}

// grpcMatchOf is a GRPCRouteMatch as a path and header match on gRPC
// requests, with the service and method it ranks by. Exact service and
// method is the path /service/method; a service alone its methods
// (/service/…); a method alone, or RegularExpression, a regular
// expression on the whole path.
func grpcMatchOf(m gwv1.GRPCRouteMatch) (mp plan.Match, service, method string, err error) {
	mp = plan.Match{PathKind: plan.PathPrefix, Path: "/", GRPC: true}
	if mm := m.Method; mm != nil {
		if mm.Service != nil {
			service = *mm.Service
		}
		if mm.Method != nil {
			method = *mm.Method
		}
		regex := mm.Type != nil && *mm.Type == gwv1.GRPCMethodMatchRegularExpression
		switch {
		case regex:
			for _, part := range [][2]string{{"service", service}, {"method", method}} {
				if _, err := regexp.Compile(part[1]); err != nil {
					return mp, "", "", fmt.Errorf("method.%s %q: %v", part[0], part[1], err)
				}
			}
			mp.PathKind, mp.Path = plan.PathRegex, "/"+orAny(service)+"/"+orAny(method)
		case service != "" && method != "":
			mp.PathKind, mp.Path = plan.PathExact, "/"+service+"/"+method
		case service != "":
			mp.Path = "/" + service // a path-separated prefix: /service/… only
		case method != "":
			mp.PathKind, mp.Path = plan.PathRegex, "/[^/]+/"+regexp.QuoteMeta(method)
		}
	}
	seen := map[string]bool{}
	for _, h := range m.Headers {
		name := strings.ToLower(string(h.Name))
		if seen[name] {
			continue // the first of equal names wins, as for HTTPRoutes
		}
		seen[name] = true
		regex := h.Type != nil && *h.Type == gwv1.GRPCHeaderMatchRegularExpression
		if regex {
			if _, err := regexp.Compile(h.Value); err != nil {
				return mp, "", "", fmt.Errorf("header %s %q: %v", h.Name, h.Value, err)
			}
		}
		mp.Headers = append(mp.Headers, plan.ValueMatch{Name: name, Value: h.Value, Regex: regex})
	}
	return mp, service, method, nil
}

// orAny is a regular expression part, or any one path segment when empty.
func orAny(re string) string {
	if re == "" {
		return "[^/]+"
	}
	return "(?:" + re + ")"
}
