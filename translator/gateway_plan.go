package translator

import "time"

// The Gateway plan is what the Gateway API rules decide, free of Kubernetes
// types: the Envoy builders (envoy_listener.go, envoy_route.go) read only
// these.

// listenerPlan is one Envoy listener: a Gateway's port.
type listenerPlan struct {
	name    string // <gw-ns>/<gw>/<port>
	address string
	port    uint32
	// http is set for a plaintext port: one connection manager, one route
	// configuration for every HTTP listener on the port.
	http *routeTablePlan
	// chains are an HTTPS port's filter chains, one per listener, chosen by
	// SNI.
	chains []tlsChainPlan
}

// tlsChainPlan is one HTTPS listener: its SNI names, certificates and
// routes.
type tlsChainPlan struct {
	listener    string   // the Gateway listener's name
	serverNames []string // empty: any SNI (and none)
	certSecrets []string // SDS secret names
	routes      *routeTablePlan
}

// routeTablePlan is one route configuration.
type routeTablePlan struct {
	name string
	// port is the listener's: where a redirect that names no port and no
	// scheme sends the client.
	port   uint32
	vhosts []vhostPlan // sorted by hostname
	// listeners are the Gateway listeners whose routes the table holds:
	// what a route change patches it from (the builders do not read it).
	listeners []*listenerState
}

// vhostPlan is the routes of one hostname, in precedence order.
type vhostPlan struct {
	hostname string // "*" for any
	routes   []routePlan
}

// routePlan is one match of one HTTPRoute rule.
type routePlan struct {
	name  string // <route-ns>/<route>/rule/<i>/match/<j>
	match matchPlan
	// Exactly one of redirect, backends (possibly all invalid), or
	// direct500 is what the rule does.
	redirect  *redirectPlan
	backends  []weightedBackend
	direct500 bool
	// requestHeaders and responseHeaders are the rule's header modifiers.
	requestHeaders, responseHeaders headerEdits
	// rewrite is the rule's URLRewrite filter, nil when it has none.
	rewrite *rewritePlan
	// timeout bounds the request to the backend (0 disables it); nil
	// keeps Envoy's default.
	timeout *time.Duration
}

// rewritePlan is a URLRewrite filter; zero values keep the request's.
type rewritePlan struct {
	host     string
	fullPath string  // ReplaceFullPath
	prefix   *string // ReplacePrefixMatch: replaces the match's path prefix
}

// weightedBackend is a cluster and its weight; an invalid backend has an
// empty cluster and is answered 500.
type weightedBackend struct {
	cluster string
	weight  uint32
	// requestHeaders and responseHeaders are the backendRef's own header
	// modifiers, applied when this backend is picked.
	requestHeaders, responseHeaders headerEdits
}

type pathKind int

const (
	pathPrefix pathKind = iota
	pathExact
	pathRegex
)

type matchPlan struct {
	pathKind pathKind
	path     string
	headers  []valueMatch // name, value; regex when set
	query    []valueMatch
	method   string
}

type valueMatch struct {
	name, value string
	regex       bool
}

type headerEdits struct {
	set, add []headerValue
	remove   []string
}

type headerValue struct{ name, value string }

func (h headerEdits) empty() bool { return len(h.set) == 0 && len(h.add) == 0 && len(h.remove) == 0 }

// redirectPlan is a RequestRedirect filter; zero values keep the request's.
type redirectPlan struct {
	scheme, host string
	port         uint32
	fullPath     string // ReplaceFullPath
	prefix       *string
	code         int
}
