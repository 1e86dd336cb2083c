package routesplit

import (
	"encoding/json"
	"fmt"
	"strconv"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/wrapperspb"

	// The listeners' typed configs, resolved by protojson.
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/on_demand/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
)

// The world: hostnames svc-<i>.example, each with the two routes tlsplane
// emits for TestRoutePropagation's HTTPRoutes (a 302 to moved.example on
// the path prefix /v<generation>, and /backend to the Service's cluster),
// plus, where the shape can say them, a wildcard hostname *.wild.example
// and a catch-all (an HTTPRoute without hostnames), each a 302 that names
// it, so a probe tells which virtual host answered.
const (
	statPrefix   = "rs"
	routeName    = "rs-routes" // the one route configuration of rds and vhds
	scopesName   = "rs-scopes"
	wildHost     = "*.wild.example"
	movedHost    = "moved.example"
	wildMoved    = "wild-moved.example"
	catchAllHost = "catchall-moved.example"
)

func host(i int) string { return "svc-" + strconv.Itoa(i) + ".example" }

// routes are one hostname's routes at a generation.
func routes(i, gen int) []*routev3.Route {
	return []*routev3.Route{{
		Name:  "redirect",
		Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: "/v" + strconv.Itoa(gen)}},
		Action: &routev3.Route_Redirect{Redirect: &routev3.RedirectAction{
			HostRedirect: movedHost, ResponseCode: routev3.RedirectAction_FOUND}},
	}, {
		Name:  "backend",
		Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Path{Path: "/backend"}},
		Action: &routev3.Route_Route{Route: &routev3.RouteAction{
			ClusterSpecifier:            &routev3.RouteAction_Cluster{Cluster: "svc-" + strconv.Itoa(i)},
			ClusterNotFoundResponseCode: routev3.RouteAction_INTERNAL_SERVER_ERROR,
		}},
	}}
}

func redirectAll(to string) []*routev3.Route {
	return []*routev3.Route{{
		Name:  "all",
		Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
		Action: &routev3.Route_Redirect{Redirect: &routev3.RedirectAction{
			HostRedirect: to, ResponseCode: routev3.RedirectAction_FOUND}},
	}}
}

// shape is one way of splitting the route table.
type shape interface {
	// name is what the results call it.
	name() string
	// vhdsPush says whether the server pushes every virtual host of a
	// VHDS route configuration (else only those Envoy asks for).
	vhdsPush() bool
	// listeners are the LDS resources, on the given ports.
	listeners(ports []int) []resource
	// initial are the route resources of n hostnames, generation 0.
	initial(n int) []resource
	// edit is the resource that moves hostname i to generation gen.
	edit(i, gen int) resource
	// stats is a regex of the stats (by plain name) that edit(i, …)
	// moves: its subscriptions' update_time and update_duration.
	stats(i int) string
}

// listener is a plain-HTTP listener on 127.0.0.1:port whose connection
// manager, named prefix, takes routes from routeSpec (the "rds" or
// "scoped_routes" field, as JSON), with the on_demand filter if asked.
func listener(name string, port int, prefix string, routeSpec map[string]any, onDemand bool) resource {
	filters := []any{}
	if onDemand {
		filters = append(filters, map[string]any{"name": "envoy.filters.http.on_demand", "typed_config": map[string]any{
			"@type": "type.googleapis.com/envoy.extensions.filters.http.on_demand.v3.OnDemand"}})
	}
	filters = append(filters, map[string]any{"name": "envoy.filters.http.router", "typed_config": map[string]any{
		"@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}})
	hcm := map[string]any{
		"@type":        "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
		"stat_prefix":  prefix,
		"http_filters": filters,
	}
	for k, v := range routeSpec {
		hcm[k] = v
	}
	l := map[string]any{
		"name":    name,
		"address": map[string]any{"socket_address": map[string]any{"address": "127.0.0.1", "port_value": port}},
		"filter_chains": []any{map[string]any{"filters": []any{map[string]any{
			"name": "envoy.filters.network.http_connection_manager", "typed_config": hcm}}}},
	}
	b, err := json.Marshal(l)
	if err != nil {
		panic(err)
	}
	var pb listenerv3.Listener
	if err := protojson.Unmarshal(b, &pb); err != nil {
		panic(fmt.Sprintf("listener %s: %v", name, err))
	}
	return prepare(listenerType, name, &pb)
}

var adsSource = map[string]any{"ads": map[string]any{}, "resource_api_version": "V3"}

// oneTable is today's shape: one RouteConfiguration of every virtual host.
type oneTable struct{ vhosts []*routev3.VirtualHost }

func (*oneTable) name() string   { return "rds" }
func (*oneTable) vhdsPush() bool { return false }
func (*oneTable) listeners(ports []int) []resource {
	return []resource{listener("http", ports[0], statPrefix, map[string]any{
		"rds": map[string]any{"config_source": adsSource, "route_config_name": routeName}}, false)}
}
func (s *oneTable) initial(n int) []resource {
	s.vhosts = s.vhosts[:0]
	for i := range n {
		s.vhosts = append(s.vhosts, &routev3.VirtualHost{Name: host(i), Domains: []string{host(i)}, Routes: routes(i, 0)})
	}
	s.vhosts = append(s.vhosts,
		&routev3.VirtualHost{Name: wildHost, Domains: []string{wildHost}, Routes: redirectAll(wildMoved)},
		&routev3.VirtualHost{Name: "catch-all", Domains: []string{"*"}, Routes: redirectAll(catchAllHost)})
	return []resource{s.table()}
}
func (s *oneTable) table() resource {
	return prepare(routeType, routeName, &routev3.RouteConfiguration{
		Name: routeName, IgnorePortInHostMatching: true, VirtualHosts: s.vhosts})
}
func (s *oneTable) edit(i, gen int) resource {
	s.vhosts[i] = &routev3.VirtualHost{Name: host(i), Domains: []string{host(i)}, Routes: routes(i, gen)}
	return s.table()
}
func (*oneTable) stats(int) string { return `\.rds\.` + routeName + `\.` }

// vhds is one RouteConfiguration whose virtual hosts come over VHDS, each
// a resource named "<route config>/<hostname>".
type vhds struct{ push bool }

func (s *vhds) name() string {
	if s.push {
		return "vhds"
	}
	return "vhds-ondemand"
}
func (s *vhds) vhdsPush() bool { return s.push }
func (s *vhds) listeners(ports []int) []resource {
	return []resource{listener("http", ports[0], statPrefix, map[string]any{
		"rds": map[string]any{"config_source": adsSource, "route_config_name": routeName}}, !s.push)}
}
func vhostResource(name string, domain string, r []*routev3.Route) resource {
	full := routeName + "/" + name
	return prepare(virtualHostType, full, &routev3.VirtualHost{Name: full, Domains: []string{domain}, Routes: r})
}
func (s *vhds) initial(n int) []resource {
	out := []resource{prepare(routeType, routeName, &routev3.RouteConfiguration{
		Name: routeName, IgnorePortInHostMatching: true,
		Vhds: &routev3.Vhds{ConfigSource: adsConfigSource()},
	})}
	for i := range n {
		out = append(out, vhostResource(host(i), host(i), routes(i, 0)))
	}
	return append(out, vhostResource(wildHost, wildHost, redirectAll(wildMoved)),
		vhostResource("catch-all", "*", redirectAll(catchAllHost)))
}
func (s *vhds) edit(i, gen int) resource { return vhostResource(host(i), host(i), routes(i, gen)) }
func (*vhds) stats(int) string           { return `\.` + routeName + `\.` }

// scoped is scoped RDS: a scope per hostname keyed on the Host header's
// host part, each naming its own RouteConfiguration over RDS (or, inline,
// carrying it in the scope).
type scoped struct {
	inline bool
	// second adds a second listener with scoped RDS of its own, to see
	// whether the two see each other's scopes.
	second bool
}

func (s *scoped) name() string {
	if s.inline {
		return "srds-inline"
	}
	return "srds"
}
func (*scoped) vhdsPush() bool { return false }

func scopedSpec(name string) map[string]any {
	return map[string]any{"scoped_routes": map[string]any{
		"name": name,
		"scope_key_builder": map[string]any{"fragments": []any{map[string]any{
			"header_value_extractor": map[string]any{"name": ":authority", "element_separator": ":", "index": 0}}}},
		"rds_config_source": adsSource,
		"scoped_rds":        map[string]any{"scoped_rds_config_source": adsSource},
	}}
}

func (s *scoped) listeners(ports []int) []resource {
	out := []resource{listener("http", ports[0], statPrefix, scopedSpec(scopesName), false)}
	if s.second && len(ports) > 1 {
		out = append(out, listener("http2", ports[1], "rs2", scopedSpec("rs2-scopes"), false))
	}
	return out
}

func scopedRouteName(i int) string { return "rs-svc-" + strconv.Itoa(i) }

// scope is the scope of key, and (unless inline) the route configuration
// it names, holding one virtual host for domain.
func (s *scoped) scope(scopeName, key, rcName, domain string, r []*routev3.Route) []resource {
	rc := &routev3.RouteConfiguration{Name: rcName, IgnorePortInHostMatching: true,
		VirtualHosts: []*routev3.VirtualHost{{Name: domain, Domains: []string{domain}, Routes: r}}}
	sc := &routev3.ScopedRouteConfiguration{Name: scopeName, RouteConfigurationName: rcName,
		Key: &routev3.ScopedRouteConfiguration_Key{Fragments: []*routev3.ScopedRouteConfiguration_Key_Fragment{{
			Type: &routev3.ScopedRouteConfiguration_Key_Fragment_StringKey{StringKey: key}}}}}
	if s.inline {
		// Inline, a route configuration is checked as a static one is:
		// every cluster must exist, unless told otherwise.
		rc.ValidateClusters = wrapperspb.Bool(false)
		sc.RouteConfigurationName = ""
		sc.RouteConfiguration = rc
		return []resource{prepare(scopedRouteType, scopeName, sc)}
	}
	return []resource{prepare(scopedRouteType, scopeName, sc), prepare(routeType, rcName, rc)}
}

func (s *scoped) initial(n int) []resource {
	var out []resource
	for i := range n {
		out = append(out, s.scope("scope-"+strconv.Itoa(i), host(i), scopedRouteName(i), host(i), routes(i, 0))...)
	}
	// A scope key is matched exactly: these two are literal keys, a
	// wildcard hostname and a catch-all cannot be said.
	out = append(out, s.scope("scope-wild", wildHost, "rs-wild", "*", redirectAll(wildMoved))...)
	out = append(out, s.scope("scope-any", "*", "rs-any", "*", redirectAll(catchAllHost))...)
	return out
}

func (s *scoped) edit(i, gen int) resource {
	r := s.scope("scope-"+strconv.Itoa(i), host(i), scopedRouteName(i), host(i), routes(i, gen))
	if s.inline {
		return r[0]
	}
	return r[1]
}

func (s *scoped) stats(i int) string {
	if s.inline {
		return `\.scoped_rds\.` + scopesName + `\.`
	}
	return `\.` + scopedRouteName(i) + `\.`
}

func adsConfigSource() *corev3.ConfigSource {
	return &corev3.ConfigSource{ResourceApiVersion: corev3.ApiVersion_V3,
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}}}
}
