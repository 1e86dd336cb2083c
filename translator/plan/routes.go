package plan

import "time"

// The Gateway plan is what the Gateway API rules decide for one Gateway:
// listeners, route tables and their virtual hosts. The emitter
// (envoy/listener.go, envoy/route.go) reads only these.

// Listener is one Envoy listener: a Gateway's port.
type Listener struct {
	Name    string // <gw-ns>/<gw>/<port>
	Address string
	Port    uint32
	// HTTP is set for a plaintext port: one connection manager, one route
	// configuration for every HTTP listener on the port.
	HTTP *RouteTable
	// Chains are an HTTPS port's filter chains, one per listener, chosen by
	// SNI.
	Chains []TLSChain
}

// Tables are the listener's route configurations.
func (l *Listener) Tables() []*RouteTable {
	if l.HTTP != nil {
		return []*RouteTable{l.HTTP}
	}
	out := make([]*RouteTable, 0, len(l.Chains))
	for _, c := range l.Chains {
		out = append(out, c.Routes)
	}
	return out
}

// TLSChain is one HTTPS listener: its SNI names, certificates and routes.
type TLSChain struct {
	Listener    string   // the Gateway listener's name
	ServerNames []string // empty: any SNI (and none)
	CertSecrets []string // SDS secret names
	Routes      *RouteTable
}

// RouteTable is one route configuration.
type RouteTable struct {
	Name string
	// Port is the listener's: where a redirect that names no port and no
	// scheme sends the client.
	Port         uint32
	VirtualHosts []VirtualHost // sorted by hostname
}

// VirtualHost is the routes of one hostname, in precedence order.
type VirtualHost struct {
	Hostname string // "*" for any
	Routes   []Route
}

// Route is one match of one HTTPRoute rule.
type Route struct {
	Name  string // <route-ns>/<route>/rule/<i>/match/<j>
	Match Match
	// Exactly one of Redirect, Backends (possibly all invalid), or
	// Direct500 is what the rule does.
	Redirect  *Redirect
	Backends  []WeightedBackend
	Direct500 bool
	// RequestHeaders and ResponseHeaders are the rule's header modifiers.
	RequestHeaders, ResponseHeaders HeaderEdits
	// Rewrite is the rule's URLRewrite filter, nil when it has none.
	Rewrite *Rewrite
	// Timeout bounds the request to the backend (0 disables it); nil
	// keeps Envoy's default.
	Timeout *time.Duration
}

// Rewrite is a URLRewrite filter; zero values keep the request's.
type Rewrite struct {
	Host     string
	FullPath string  // ReplaceFullPath
	Prefix   *string // ReplacePrefixMatch: replaces the match's path prefix
}

// WeightedBackend is a cluster and its weight; an invalid backend has an
// empty cluster and is answered 500.
type WeightedBackend struct {
	Cluster string
	Weight  uint32
	// RequestHeaders and ResponseHeaders are the backendRef's own header
	// modifiers, applied when this backend is picked.
	RequestHeaders, ResponseHeaders HeaderEdits
}

// PathKind is how a route matches the path.
type PathKind int

const (
	PathPrefix PathKind = iota
	PathExact
	PathRegex
)

// Match is what a request must carry to take a route.
type Match struct {
	PathKind PathKind
	Path     string
	Headers  []ValueMatch // name, value; regex when set
	Query    []ValueMatch
	Method   string
}

// ValueMatch matches one header or query parameter.
type ValueMatch struct {
	Name, Value string
	Regex       bool
}

// HeaderEdits are a header modifier's edits.
type HeaderEdits struct {
	Set, Add []HeaderValue
	Remove   []string
}

// HeaderValue is one header to set or add.
type HeaderValue struct{ Name, Value string }

// Empty reports that h edits nothing.
func (h HeaderEdits) Empty() bool { return len(h.Set) == 0 && len(h.Add) == 0 && len(h.Remove) == 0 }

// Redirect is a RequestRedirect filter; zero values keep the request's.
type Redirect struct {
	Scheme, Host string
	Port         uint32
	FullPath     string // ReplaceFullPath
	Prefix       *string
	Code         int
}
