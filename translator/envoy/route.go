package envoy

import (
	"regexp"
	"strings"

	"github.com/tlsplane/tlsplane/translator/plan"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// invalidBackendCluster names no cluster: a weighted share sent to it is
// answered 500 (cluster_not_found_response_code), as the spec asks of
// requests routed to an invalid backend.
const invalidBackendCluster = plan.InvalidBackendClusterName

// RouteConfig builds one route configuration: a virtual host per
// hostname, routes in the Gateway API's precedence order. The Host
// header's port is ignored in choosing a virtual host: the Gateway API
// matches hostnames only.
func RouteConfig(t *plan.RouteTable) *routev3.RouteConfiguration {
	var vhosts []*routev3.VirtualHost
	for i := range t.VirtualHosts {
		vhosts = append(vhosts, VirtualHost(t, &t.VirtualHosts[i]))
	}
	if len(t.Misdirected) > 0 {
		vhosts = append(vhosts, misdirectedVirtualHost(t.Misdirected))
	}
	return RouteConfigOf(t, vhosts)
}

// RouteConfigOf is t's route configuration holding vhosts, its virtual
// hosts as emitted (a patched table's may differ from t.VirtualHosts).
func RouteConfigOf(t *plan.RouteTable, vhosts []*routev3.VirtualHost) *routev3.RouteConfiguration {
	return &routev3.RouteConfiguration{Name: t.Name, IgnorePortInHostMatching: true, VirtualHosts: vhosts}
}

// VirtualHost builds the virtual host of one hostname of t; the caller
// validates it.
func VirtualHost(t *plan.RouteTable, vh *plan.VirtualHost) *routev3.VirtualHost {
	v := &routev3.VirtualHost{Name: vh.Hostname, Domains: []string{vh.Hostname}}
	for i := range vh.Routes {
		v.Routes = append(v.Routes, envoyRoute(t, &vh.Routes[i]))
	}
	return v
}

func envoyRoute(t *plan.RouteTable, r *plan.Route) *routev3.Route {
	out := &routev3.Route{Name: r.Name, Match: routeMatch(r.Match)}
	switch {
	case r.Redirect != nil:
		out.Action = &routev3.Route_Redirect{Redirect: redirectAction(r.Redirect, t.Port)}
	case r.Direct500:
		status := uint32(500)
		if r.Match.GRPC {
			// gRPC clients read 503 as UNAVAILABLE, what the GRPCRoute
			// spec asks for a rule that cannot be served (500 reads as
			// UNKNOWN).
			status = 503
		}
		out.Action = &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: status}}
	default:
		a := routeAction(r.Backends)
		if r.Match.GRPC {
			// A share sent to an invalid backend: UNAVAILABLE to the
			// gRPC client (the GRPCRoute spec), not UNKNOWN.
			a.ClusterNotFoundResponseCode = routev3.RouteAction_SERVICE_UNAVAILABLE
		}
		if r.Rewrite != nil {
			rewriteAction(a, r.Rewrite, r.Match)
		}
		switch {
		case r.Timeout != nil:
			a.Timeout = durationpb.New(*r.Timeout)
		case r.Match.GRPC:
			// A stream may last: no route timeout (Envoy's default is
			// 15 s), but the deadline the caller's grpc-timeout sets.
			a.Timeout = durationpb.New(0)
			a.MaxStreamDuration = &routev3.RouteAction_MaxStreamDuration{GrpcTimeoutHeaderMax: durationpb.New(0)}
		}
		if r.Retry != nil {
			a.RetryPolicy = retryPolicy(r.Retry)
		}
		a.RequestMirrorPolicies = mirrorPolicies(r.Mirrors)
		out.Action = &routev3.Route_Route{Route: a}
	}
	if _, forwarded := out.Action.(*routev3.Route_Route); forwarded && r.CORS != nil {
		// Only a forwarded route: Envoy's CORS filter passes over direct
		// responses and redirects.
		configs, err := corsConfigs(r.CORS)
		if err != nil {
			// A filter is never skipped: without its policy the rule answers 500.
			out.Action = &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 500}}
		} else {
			out.TypedPerFilterConfig = configs
		}
	}
	if _, forwarded := out.Action.(*routev3.Route_Route); forwarded {
		if s := sessionOf(t, r.Backends); s != nil {
			config, err := sessionPerRoute(s)
			if err != nil {
				// Never skipped: without its session the rule answers 500.
				out.Action = &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 500}}
				out.TypedPerFilterConfig = nil
			} else {
				if out.TypedPerFilterConfig == nil {
					out.TypedPerFilterConfig = map[string]*anypb.Any{}
				}
				out.TypedPerFilterConfig[statefulSessionFilterName] = config
			}
		}
	}
	out.RequestHeadersToAdd, out.RequestHeadersToRemove = headerOptions(r.RequestHeaders), r.RequestHeaders.Remove
	out.ResponseHeadersToAdd, out.ResponseHeadersToRemove = headerOptions(r.ResponseHeaders), r.ResponseHeaders.Remove
	return out
}

func routeMatch(m plan.Match) *routev3.RouteMatch {
	rm := &routev3.RouteMatch{}
	switch m.PathKind {
	case plan.PathExact:
		rm.PathSpecifier = &routev3.RouteMatch_Path{Path: m.Path}
	case plan.PathRegex:
		rm.PathSpecifier = &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: m.Path}}
	default:
		if m.Path == "/" {
			rm.PathSpecifier = &routev3.RouteMatch_Prefix{Prefix: "/"}
		} else {
			// Matches /foo and /foo/..., never /foobar: the spec's
			// element-wise prefix.
			rm.PathSpecifier = &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: m.Path}
		}
	}
	for _, h := range m.Headers {
		rm.Headers = append(rm.Headers, &routev3.HeaderMatcher{
			Name:                 h.Name,
			HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: stringMatcher(h)},
		})
	}
	if m.GRPC {
		rm.Grpc = &routev3.RouteMatch_GrpcRouteMatchOptions{}
	}
	if m.Method != "" {
		rm.Headers = append(rm.Headers, &routev3.HeaderMatcher{
			Name:                 ":method",
			HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: stringMatcher(plan.ValueMatch{Value: m.Method})},
		})
	}
	for _, q := range m.Query {
		rm.QueryParameters = append(rm.QueryParameters, &routev3.QueryParameterMatcher{
			Name:                         q.Name,
			QueryParameterMatchSpecifier: &routev3.QueryParameterMatcher_StringMatch{StringMatch: stringMatcher(q)},
		})
	}
	return rm
}

func stringMatcher(v plan.ValueMatch) *matcherv3.StringMatcher {
	if v.Regex {
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: v.Value}}}
	}
	return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: v.Value}}
}

// routeAction sends to one cluster, or splits by weight; shares of invalid
// backends go to invalidBackendCluster and are answered 500.
func routeAction(backends []plan.WeightedBackend) *routev3.RouteAction {
	a := &routev3.RouteAction{ClusterNotFoundResponseCode: routev3.RouteAction_INTERNAL_SERVER_ERROR}
	name := func(b plan.WeightedBackend) string {
		if b.Cluster == "" {
			return invalidBackendCluster
		}
		return b.Cluster
	}
	if len(backends) == 1 && backends[0].RequestHeaders.Empty() && backends[0].ResponseHeaders.Empty() {
		a.ClusterSpecifier = &routev3.RouteAction_Cluster{Cluster: name(backends[0])}
		return a
	}
	// Per-backend header modifiers exist only on a weighted cluster entry.
	wc := &routev3.WeightedCluster{}
	for _, b := range backends {
		wc.Clusters = append(wc.Clusters, &routev3.WeightedCluster_ClusterWeight{
			Name: name(b), Weight: wrapperspb.UInt32(b.Weight),
			RequestHeadersToAdd: headerOptions(b.RequestHeaders), RequestHeadersToRemove: b.RequestHeaders.Remove,
			ResponseHeadersToAdd: headerOptions(b.ResponseHeaders), ResponseHeadersToRemove: b.ResponseHeaders.Remove,
		})
	}
	a.ClusterSpecifier = &routev3.RouteAction_WeightedClusters{WeightedClusters: wc}
	return a
}

// rewriteAction sets a URLRewrite on a. Paths are rewritten by regex, on
// the path without its query: Envoy's prefix_rewrite cannot replace a
// prefix element-wise ("/strip" to "/" must give "/" for "/strip" and
// "/x" for "/strip/x").
func rewriteAction(a *routev3.RouteAction, r *plan.Rewrite, m plan.Match) {
	if r.Host != "" {
		a.HostRewriteSpecifier = &routev3.RouteAction_HostRewriteLiteral{HostRewriteLiteral: r.Host}
	}
	var pattern, substitution string
	switch {
	case r.FullPath != "":
		pattern, substitution = "^.*$", r.FullPath
	case r.Prefix != nil:
		prefix := regexp.QuoteMeta(strings.TrimRight(m.Path, "/"))
		if replacement := strings.TrimRight(*r.Prefix, "/"); replacement == "" {
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

func headerOptions(h plan.HeaderEdits) []*corev3.HeaderValueOption {
	var out []*corev3.HeaderValueOption
	for _, s := range h.Set {
		out = append(out, &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: s.Name, Value: s.Value},
			AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
		})
	}
	for _, a := range h.Add {
		out = append(out, &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: a.Name, Value: a.Value},
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
func redirectAction(r *plan.Redirect, listenerPort uint32) *routev3.RedirectAction {
	port := r.Port
	if port == 0 {
		port = listenerPort
		if r.Scheme != "" {
			port = wellKnownPorts[strings.ToLower(r.Scheme)]
		}
	}
	a := &routev3.RedirectAction{HostRedirect: r.Host, PortRedirect: port, ResponseCode: redirectCodes[r.Code]}
	if r.Scheme != "" {
		a.SchemeRewriteSpecifier = &routev3.RedirectAction_SchemeRedirect{SchemeRedirect: strings.ToLower(r.Scheme)}
	}
	switch {
	case r.FullPath != "":
		a.PathRewriteSpecifier = &routev3.RedirectAction_PathRedirect{PathRedirect: r.FullPath}
	case r.Prefix != nil:
		a.PathRewriteSpecifier = &routev3.RedirectAction_PrefixRewrite{PrefixRewrite: *r.Prefix}
	}
	return a
}
