package route

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/referencegrant"
)

// JudgeHTTPRoute translates every rule and match of an HTTPRoute: its
// filters, retries and timeouts, backends and matches (judgeRule).
func JudgeHTTPRoute(r *gwv1.HTTPRoute, ix *input.Index, grants referencegrant.Grants) *Route {
	rs := newRoute(input.KindHTTPRoute, &r.ObjectMeta, r.Spec.CommonRouteSpec, r.Spec.Hostnames, r.Status.RouteStatus)
	rs.judgeHTTPRules(r, ix, grants)
	return rs
}

// judgeHTTPRules judges an HTTPRoute's rules into rs.
func (rs *Route) judgeHTTPRules(r *gwv1.HTTPRoute, ix *input.Index, grants referencegrant.Grants) {
	var problems []string
	for i, hr := range r.Spec.Rules {
		problems = judgeRule(rs, i, rule[gwv1.HTTPRouteMatch]{
			filters:  hr.Filters,
			timing:   func(p *plan.Route) bool { return rs.ruleTiming(i, hr.Retry, hr.Timeouts, p) },
			backends: httpBackendRefs(hr.BackendRefs),
			matches:  hr.Matches,
			name:     plan.HTTPRouteMatchName,
			match:    rs.httpMatch,
		}, ix, grants, problems)
	}
	rs.resolved(problems)
}

// ruleTiming sets rule i's retries and timeouts on p; it reports whether
// they are not supported (the rule then answers 500).
func (rs *Route) ruleTiming(i int, retry *gwv1.HTTPRouteRetry, timeouts *gwv1.HTTPRouteTimeouts, p *plan.Route) bool {
	if retry != nil {
		r, timeout, err := ruleRetry(retry, timeouts)
		if err != nil {
			rs.Unsupported = append(rs.Unsupported, fmt.Sprintf("rules[%d].retry: %v", i, err))
			return true
		}
		p.Retry, p.Timeout = r, timeout
		return false
	}
	timeout, err := ruleTimeout(timeouts)
	if err != nil {
		rs.Unsupported = append(rs.Unsupported, fmt.Sprintf("rules[%d].timeouts: %v", i, err))
		return true
	}
	p.Timeout = timeout
	return false
}

// httpMatch sets match j of rule i on p, ranked by path, method, headers
// and query parameters.
func (rs *Route) httpMatch(p *plan.Route, i, j int, m gwv1.HTTPRouteMatch) (Rank, error) {
	mp, err := matchOf(m)
	if err != nil {
		return Rank{}, err
	}
	p.Match = mp
	if p.Rewrite != nil && p.Rewrite.Prefix != nil && mp.PathKind != plan.PathPrefix {
		// The CRD refuses this; a route that slipped past it answers 500.
		rs.Unsupported = append(rs.Unsupported, fmt.Sprintf("rules[%d].matches[%d]: ReplacePrefixMatch needs a PathPrefix match", i, j))
		p.Direct500, p.Backends = true, nil
	}
	return rs.rankOf(mp, i, j), nil
}

// ruleFilters applies a rule's filters to p; it reports whether one is
// not supported (the rule then answers 500: a filter is never skipped),
// and adds to problems the mirrors whose backendRef did not resolve.
func (rs *Route) ruleFilters(i int, filters []gwv1.HTTPRouteFilter, p *plan.Route, ix *input.Index, grants referencegrant.Grants, problems []string) (bool, []string) {
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
			m, problem, err := rs.ruleMirror(i, k, f.RequestMirror, ix, grants)
			switch {
			case err != nil:
				unsupported = true
				rs.Unsupported = append(rs.Unsupported, fmt.Sprintf("rules[%d].filters[%d].%v", i, k, err))
			case problem != "":
				problems = append(problems, problem)
			default:
				p.Mirrors = append(p.Mirrors, *m)
			}
		case f.Type == gwv1.HTTPRouteFilterCORS && f.CORS != nil:
			if err := ruleCORS(i, k, f.CORS, p); err != "" {
				unsupported = true
				rs.Unsupported = append(rs.Unsupported, err)
			}
		default:
			unsupported = true
			rs.Unsupported = append(rs.Unsupported, fmt.Sprintf("rules[%d].filters[%d]: type %q is not supported", i, k, f.Type))
		}
	}
	return unsupported, problems
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
