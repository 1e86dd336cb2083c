package plan

import "time"

// The traffic plan is what an XBackendTrafficPolicy decides for the
// backends it targets: a retry budget on their clusters, and session
// persistence on the routes that send to them.

// RetryBudget caps the retries in flight to a cluster at Percent of its
// active requests, never below MinConcurrency (Envoy's circuit breaker
// retry budget).
type RetryBudget struct {
	Percent uint32 `json:"percent"`
	// MinConcurrency is the retries always allowed; 0 keeps Envoy's
	// default (3).
	MinConcurrency uint32 `json:"minConcurrency,omitempty"`
}

// SessionKind is what carries a session: a cookie or a header.
type SessionKind int

const (
	SessionCookie SessionKind = iota
	SessionHeader
)

var sessionKinds = []string{SessionCookie: "Cookie", SessionHeader: "Header"}

// MarshalText names the kind, for plans printed in golden files.
func (k SessionKind) MarshalText() ([]byte, error) { return marshalName(sessionKinds, int(k)) }

// UnmarshalText reads what MarshalText wrote.
func (k *SessionKind) UnmarshalText(b []byte) error { return unmarshalName(sessionKinds, b, (*int)(k)) }

// Session keeps a client on the endpoint that first answered it: the
// gateway names that endpoint in a cookie or header of its answer, and a
// request carrying it goes there while the endpoint is healthy.
type Session struct {
	Kind SessionKind `json:"kind"`
	Name string      `json:"name"` // the cookie's or header's
	// Path and TTL are the cookie's: TTL 0 makes a session cookie,
	// otherwise it carries Max-Age and expires then.
	Path string        `json:"path,omitempty"`
	TTL  time.Duration `json:"ttl,omitempty"`
}
