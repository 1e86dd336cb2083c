package plan

import "time"

// The Gateway plan is what the Gateway API rules decide for one Gateway:
// listeners, route tables and their virtual hosts. The emitter
// (envoy/listener.go, envoy/route.go) reads only these.

// Listener is one Envoy listener: a Gateway's port.
type Listener struct {
	Name    string `json:"name,omitempty"` // <gw-ns>/<gw>/<port>
	Address string `json:"address,omitempty"`
	Port    uint32 `json:"port,omitempty"`
	// Captured: a mesh sidecar's outbound listener, which binds no socket;
	// the capture listener hands it the connections whose original
	// destination is Address:Port.
	Captured bool `json:"captured,omitempty"`
	// HTTP is set for a plaintext port: one connection manager, one route
	// configuration for every HTTP listener on the port.
	HTTP *RouteTable `json:"http,omitempty"`
	// Chains are an HTTPS port's filter chains, one per listener, chosen by
	// SNI.
	Chains []TLSChain `json:"chains,omitempty"`
	// Streams are the filter chains of TLS and TCP listeners: TCP proxied
	// to backends, chosen by SNI (TLS) or the only one (TCP).
	Streams []StreamChain `json:"streams,omitempty"`
	// UDP is set for a port of UDP listeners: its datagrams are proxied
	// by session, and the listener has nothing else.
	UDP *UDPProxy `json:"udp,omitempty"`
	// CertificateLog, when set, has the listener's HTTP routers and TCP
	// proxies report a sample of their upstream TLS connections.
	CertificateLog *CertificateLog `json:"certificateLog,omitempty"`
}

// StreamChain is one TLS listener's hostname, or a TCP listener: the
// connection goes to a backend as it is (Passthrough, TCP), or after TLS
// is terminated with CertSecrets (Terminate).
type StreamChain struct {
	Name        string            `json:"name,omitempty"`        // <listener>[/<hostname>]
	ServerNames []string          `json:"serverNames,omitempty"` // empty: any SNI (and none)
	CertSecrets []string          `json:"certSecrets,omitempty"` // set: TLS is terminated here
	Backends    []WeightedBackend `json:"backends,omitempty"`    // an invalid one (no cluster) refuses its share
}

// SNI reports whether chains are chosen by the client's SNI.
func (l *Listener) SNI() bool {
	if len(l.Chains) > 0 {
		return true
	}
	for _, s := range l.Streams {
		if len(s.ServerNames) > 0 || len(s.CertSecrets) > 0 {
			return true
		}
	}
	return false
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
	Listener    string      `json:"listener,omitempty"`    // the Gateway listener's name
	ServerNames []string    `json:"serverNames,omitempty"` // empty: any SNI (and none)
	CertSecrets []string    `json:"certSecrets,omitempty"` // SDS secret names
	Routes      *RouteTable `json:"routes,omitempty"`
	// ClientValidation is how the chain validates client certificates
	// (the Gateway's spec.tls.frontend); nil asks for none.
	ClientValidation *ClientValidation `json:"clientValidation,omitempty"`
}

// ClientValidation is an HTTPS listener's client certificate validation.
type ClientValidation struct {
	// CASecret is the SDS secret of the CA bundle client certificates
	// must chain to (a plan.CABundle the Gateway serves).
	CASecret string `json:"caSecret"`
	// InsecureFallback (AllowInsecureFallback) lets a client through
	// without a certificate, or with one that fails validation.
	InsecureFallback bool `json:"insecureFallback,omitempty"`
}

// RouteTable is one route configuration.
type RouteTable struct {
	Name string `json:"name,omitempty"`
	// Port is the listener's: where a redirect that names no port and no
	// scheme sends the client.
	Port         uint32        `json:"port,omitempty"`
	VirtualHosts []VirtualHost `json:"virtualHosts,omitempty"` // sorted by hostname
	// Misdirected are the hostnames ("*" for any) of the other HTTPS
	// listeners of the port: a request for one of them that reached this
	// listener's chain (by SNI) is answered 421 Misdirected Request, unless
	// a virtual host of this table is the more specific match.
	Misdirected []string `json:"misdirected,omitempty"`
	// Sessions are the session persistence of the clusters whose backends
	// an XBackendTrafficPolicy targets, by cluster name (read-only, shared
	// by every table): a route sending to one keeps its sessions.
	Sessions map[string]*Session `json:"sessions,omitempty"`
}

// VirtualHost is the routes of one hostname, in precedence order.
type VirtualHost struct {
	Hostname string  `json:"hostname,omitempty"` // "*" for any
	Routes   []Route `json:"routes,omitempty"`
}

// Route is one match of one HTTPRoute rule.
type Route struct {
	Name  string `json:"name,omitempty"` // <route-ns>/<route>/rule/<i>/match/<j>
	Match Match  `json:"match,omitempty"`
	// Exactly one of Redirect, Backends (possibly all invalid), or
	// Direct500 is what the rule does.
	Redirect  *Redirect         `json:"redirect,omitempty"`
	Backends  []WeightedBackend `json:"backends,omitempty"`
	Direct500 bool              `json:"direct500,omitempty"`
	// RequestHeaders and ResponseHeaders are the rule's header modifiers.
	RequestHeaders  HeaderEdits `json:"requestHeaders,omitempty"`
	ResponseHeaders HeaderEdits `json:"responseHeaders,omitempty"`
	// Rewrite is the rule's URLRewrite filter, nil when it has none.
	Rewrite *Rewrite `json:"rewrite,omitempty"`
	// Timeout bounds the request to the backend (0 disables it); nil
	// keeps Envoy's default.
	Timeout *time.Duration `json:"timeout,omitempty"`
	// Retry is the rule's retry policy, nil when it has none.
	Retry *Retry `json:"retry,omitempty"`
	// Mirrors are the rule's RequestMirror filters, in order.
	Mirrors []Mirror `json:"mirrors,omitempty"`
	// CORS is the rule's CORS filter, nil when it has none.
	CORS *CORS `json:"cors,omitempty"`
}

// AllMirrored is Mirror.PerMillion when every request is mirrored.
const AllMirrored = 1_000_000

// Mirror sends a copy of a share of the requests to a cluster; nobody
// waits for its answer.
type Mirror struct {
	Cluster string `json:"cluster,omitempty"`
	// PerMillion is the share mirrored, in millionths (AllMirrored: all).
	PerMillion uint32 `json:"perMillion"`
}

// Retry retries a backend request on connection errors and on Codes.
type Retry struct {
	Codes []uint32 `json:"codes,omitempty"`
	// Attempts is the number of retries; 0 keeps Envoy's default (1).
	Attempts uint32 `json:"attempts,omitempty"`
	// Backoff is the least wait between tries; nil keeps Envoy's (25 ms).
	Backoff *time.Duration `json:"backoff,omitempty"`
	// PerTry bounds each try (backendRequest); nil or 0 leaves it unbounded.
	PerTry *time.Duration `json:"perTry,omitempty"`
}

// Rewrite is a URLRewrite filter; zero values keep the request's.
type Rewrite struct {
	Host     string  `json:"host,omitempty"`
	FullPath string  `json:"fullPath,omitempty"` // ReplaceFullPath
	Prefix   *string `json:"prefix,omitempty"`   // ReplacePrefixMatch: replaces the match's path prefix
}

// WeightedBackend is a cluster and its weight; an invalid backend has an
// empty cluster and is answered 500.
type WeightedBackend struct {
	Cluster string `json:"cluster,omitempty"`
	Weight  uint32 `json:"weight,omitempty"`
	// RequestHeaders and ResponseHeaders are the backendRef's own header
	// modifiers, applied when this backend is picked.
	RequestHeaders  HeaderEdits `json:"requestHeaders,omitempty"`
	ResponseHeaders HeaderEdits `json:"responseHeaders,omitempty"`
}

// PathKind is how a route matches the path.
type PathKind int

const (
	PathPrefix PathKind = iota
	PathExact
	PathRegex
)

var pathKinds = []string{PathPrefix: "PathPrefix", PathExact: "Exact", PathRegex: "RegularExpression"}

// MarshalText names the kind, for plans printed in golden files.
func (k PathKind) MarshalText() ([]byte, error) { return marshalName(pathKinds, int(k)) }

// UnmarshalText reads what MarshalText wrote.
func (k *PathKind) UnmarshalText(b []byte) error { return unmarshalName(pathKinds, b, (*int)(k)) }

// Match is what a request must carry to take a route.
type Match struct {
	PathKind PathKind     `json:"pathKind"`
	Path     string       `json:"path,omitempty"`
	Headers  []ValueMatch `json:"headers,omitempty"` // name, value; regex when set
	Query    []ValueMatch `json:"query,omitempty"`
	Method   string       `json:"method,omitempty"`
	// GRPC matches gRPC requests only (a GRPCRoute's); their route has no
	// timeout but the one the caller's grpc-timeout header sets.
	GRPC bool `json:"grpc,omitempty"`
}

// ValueMatch matches one header or query parameter.
type ValueMatch struct {
	Name  string `json:"name,omitempty"`
	Value string `json:"value,omitempty"`
	Regex bool   `json:"regex,omitempty"`
}

// HeaderEdits are a header modifier's edits.
type HeaderEdits struct {
	Set    []HeaderValue `json:"set,omitempty"`
	Add    []HeaderValue `json:"add,omitempty"`
	Remove []string      `json:"remove,omitempty"`
}

// HeaderValue is one header to set or add.
type HeaderValue struct{ Name, Value string }

// Empty reports that h edits nothing.
func (h HeaderEdits) Empty() bool { return len(h.Set) == 0 && len(h.Add) == 0 && len(h.Remove) == 0 }

// Redirect is a RequestRedirect filter; zero values keep the request's.
type Redirect struct {
	Scheme   string  `json:"scheme,omitempty"`
	Host     string  `json:"host,omitempty"`
	Port     uint32  `json:"port,omitempty"`
	FullPath string  `json:"fullPath,omitempty"` // ReplaceFullPath
	Prefix   *string `json:"prefix,omitempty"`
	Code     int     `json:"code,omitempty"`
}
