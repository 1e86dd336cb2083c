package translator

import (
	"regexp"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// invalidBackendCluster names no cluster: a weighted share sent to it is
// answered 500 (cluster_not_found_response_code), as the spec asks of
// requests routed to an invalid backend.
const invalidBackendCluster = "tlsplane.invalid-backend"

// envoyRouteConfig builds one route configuration: a virtual host per
// hostname, routes in the Gateway API's precedence order. The Host
// header's port is ignored in choosing a virtual host: the Gateway API
// matches hostnames only.
func envoyRouteConfig(t *routeTablePlan) *routev3.RouteConfiguration {
	var vhosts []*routev3.VirtualHost
	for i := range t.vhosts {
		vhosts = append(vhosts, envoyVirtualHost(t, &t.vhosts[i]))
	}
	return routeConfigOf(t, vhosts)
}

// routeConfigOf is t's route configuration holding vhosts, one per
// t.vhosts in the same order.
func routeConfigOf(t *routeTablePlan, vhosts []*routev3.VirtualHost) *routev3.RouteConfiguration {
	return &routev3.RouteConfiguration{Name: t.name, IgnorePortInHostMatching: true, VirtualHosts: vhosts}
}

func envoyVirtualHost(t *routeTablePlan, vh *vhostPlan) *routev3.VirtualHost {
	v := &routev3.VirtualHost{Name: vh.hostname, Domains: []string{vh.hostname}}
	for i := range vh.routes {
		v.Routes = append(v.Routes, envoyRoute(t, &vh.routes[i]))
	}
	return v
}

func envoyRoute(t *routeTablePlan, r *routePlan) *routev3.Route {
	out := &routev3.Route{Name: r.name, Match: routeMatch(r.match)}
	switch {
	case r.redirect != nil:
		out.Action = &routev3.Route_Redirect{Redirect: redirectAction(r.redirect, t.port)}
	case r.direct500:
		out.Action = &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 500}}
	default:
		a := routeAction(r.backends)
		if r.rewrite != nil {
			rewriteAction(a, r.rewrite, r.match)
		}
		if r.timeout != nil {
			a.Timeout = durationpb.New(*r.timeout)
		}
		out.Action = &routev3.Route_Route{Route: a}
	}
	out.RequestHeadersToAdd, out.RequestHeadersToRemove = headerOptions(r.requestHeaders), r.requestHeaders.remove
	out.ResponseHeadersToAdd, out.ResponseHeadersToRemove = headerOptions(r.responseHeaders), r.responseHeaders.remove
	return out
}

func routeMatch(m matchPlan) *routev3.RouteMatch {
	rm := &routev3.RouteMatch{}
	switch m.pathKind {
	case pathExact:
		rm.PathSpecifier = &routev3.RouteMatch_Path{Path: m.path}
	case pathRegex:
		rm.PathSpecifier = &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: m.path}}
	default:
		if m.path == "/" {
			rm.PathSpecifier = &routev3.RouteMatch_Prefix{Prefix: "/"}
		} else {
			// Matches /foo and /foo/..., never /foobar: the spec's
			// element-wise prefix.
			rm.PathSpecifier = &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: m.path}
		}
	}
	for _, h := range m.headers {
		rm.Headers = append(rm.Headers, &routev3.HeaderMatcher{
			Name:                 h.name,
			HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: stringMatcher(h)},
		})
	}
	if m.method != "" {
		rm.Headers = append(rm.Headers, &routev3.HeaderMatcher{
			Name:                 ":method",
			HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: stringMatcher(valueMatch{value: m.method})},
		})
	}
	for _, q := range m.query {
		rm.QueryParameters = append(rm.QueryParameters, &routev3.QueryParameterMatcher{
			Name:                         q.name,
			QueryParameterMatchSpecifier: &routev3.QueryParameterMatcher_StringMatch{StringMatch: stringMatcher(q)},
		})
	}
	return rm
}

func stringMatcher(v valueMatch) *matcherv3.StringMatcher {
	if v.regex {
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: v.value}}}
	}
	return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: v.value}}
}

// routeAction sends to one cluster, or splits by weight; shares of invalid
// backends go to invalidBackendCluster and are answered 500.
func routeAction(backends []weightedBackend) *routev3.RouteAction {
	a := &routev3.RouteAction{ClusterNotFoundResponseCode: routev3.RouteAction_INTERNAL_SERVER_ERROR}
	name := func(b weightedBackend) string {
		if b.cluster == "" {
			return invalidBackendCluster
		}
		return b.cluster
	}
	if len(backends) == 1 && backends[0].requestHeaders.empty() && backends[0].responseHeaders.empty() {
		a.ClusterSpecifier = &routev3.RouteAction_Cluster{Cluster: name(backends[0])}
		return a
	}
	// Per-backend header modifiers exist only on a weighted cluster entry.
	wc := &routev3.WeightedCluster{}
	for _, b := range backends {
		wc.Clusters = append(wc.Clusters, &routev3.WeightedCluster_ClusterWeight{
			Name: name(b), Weight: wrapperspb.UInt32(b.weight),
			RequestHeadersToAdd: headerOptions(b.requestHeaders), RequestHeadersToRemove: b.requestHeaders.remove,
			ResponseHeadersToAdd: headerOptions(b.responseHeaders), ResponseHeadersToRemove: b.responseHeaders.remove,
		})
	}
	a.ClusterSpecifier = &routev3.RouteAction_WeightedClusters{WeightedClusters: wc}
	return a
}

// rewriteAction sets a URLRewrite on a. Paths are rewritten by regex, on
// the path without its query: Envoy's prefix_rewrite cannot replace a
// prefix element-wise ("/strip" to "/" must give "/" for "/strip" and
// "/x" for "/strip/x").
func rewriteAction(a *routev3.RouteAction, r *rewritePlan, m matchPlan) {
	if r.host != "" {
		a.HostRewriteSpecifier = &routev3.RouteAction_HostRewriteLiteral{HostRewriteLiteral: r.host}
	}
	var pattern, substitution string
	switch {
	case r.fullPath != "":
		pattern, substitution = "^.*$", r.fullPath
	case r.prefix != nil:
		prefix := regexp.QuoteMeta(strings.TrimRight(m.path, "/"))
		if replacement := strings.TrimRight(*r.prefix, "/"); replacement == "" {
			pattern, substitution = "^"+prefix+"/*", "/"
		} else {
			pattern, substitution = "^"+prefix+"(/.*)?$", replacement+`\1`
		}
	default:
		return
	}
	a.RegexRewrite = &matcherv3.RegexMatchAndSubstitute{
		Pattern:      &matcherv3.RegexMatcher{Regex: pattern},
		Substitution: substitution,
	}
}

func headerOptions(h headerEdits) []*corev3.HeaderValueOption {
	var out []*corev3.HeaderValueOption
	for _, s := range h.set {
		out = append(out, &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: s.name, Value: s.value},
			AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
		})
	}
	for _, a := range h.add {
		out = append(out, &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: a.name, Value: a.value},
			AppendAction: corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD,
		})
	}
	return out
}

// redirectCodes are the status codes HTTPRequestRedirectFilter allows (the
// CRD admits no other); 302 is Envoy's zero value.
var redirectCodes = map[int]routev3.RedirectAction_RedirectResponseCode{
	301: routev3.RedirectAction_MOVED_PERMANENTLY,
	302: routev3.RedirectAction_FOUND,
	303: routev3.RedirectAction_SEE_OTHER,
	307: routev3.RedirectAction_TEMPORARY_REDIRECT,
	308: routev3.RedirectAction_PERMANENT_REDIRECT,
}

// wellKnownPorts are the ports a URL of the scheme leaves out.
var wellKnownPorts = map[string]uint32{"http": 80, "https": 443}

// redirectAction is the spec's redirect: without a port of its own, the
// port is the new scheme's well-known one when the scheme changes, else
// the listener's (Envoy leaves a scheme's well-known port out of Location).
func redirectAction(r *redirectPlan, listenerPort uint32) *routev3.RedirectAction {
	port := r.port
	if port == 0 {
		port = listenerPort
		if r.scheme != "" {
			port = wellKnownPorts[strings.ToLower(r.scheme)]
		}
	}
	a := &routev3.RedirectAction{HostRedirect: r.host, PortRedirect: port, ResponseCode: redirectCodes[r.code]}
	if r.scheme != "" {
		a.SchemeRewriteSpecifier = &routev3.RedirectAction_SchemeRedirect{SchemeRedirect: strings.ToLower(r.scheme)}
	}
	switch {
	case r.fullPath != "":
		a.PathRewriteSpecifier = &routev3.RedirectAction_PathRedirect{PathRedirect: r.fullPath}
	case r.prefix != nil:
		a.PathRewriteSpecifier = &routev3.RedirectAction_PrefixRewrite{PrefixRewrite: *r.prefix}
	}
	return a
}
