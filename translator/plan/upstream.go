package plan

import "github.com/tlsplane/tlsplane/translator/tlsopts"

// Cluster is one Service port as Envoy should see it; its TLS is chosen
// by the engine (a policy's, fail-closed, h2c or none).
type Cluster struct {
	Name string `json:"name,omitempty"`
	// ExternalName, with Port, makes a DNS cluster (an ExternalName
	// Service); otherwise the cluster's endpoints come over EDS.
	ExternalName string `json:"externalName,omitempty"`
	Port         uint32 `json:"port,omitempty"`
	// EDSName is the load assignment an EDS cluster reads when it is not
	// its own name: a GRPCRoute's cluster reads its Service port's.
	EDSName string `json:"edsName,omitempty"`
	// FollowDNSTTL makes a DNS cluster re-resolve as its answers' TTL
	// says, within the emitter's bounds (an XBackend's); otherwise at
	// Envoy's fixed default rate (an ExternalName Service's).
	FollowDNSTTL bool `json:"followDNSTTL,omitempty"`
}

// SANKind is the kind of a subject alternative name to match.
type SANKind int

const (
	SANDNS SANKind = iota
	SANURI
	// SANURIPrefix matches a URI SAN that starts with the value (a SPIFFE
	// trust domain or path, ending in "/").
	SANURIPrefix
)

var sanKinds = []string{SANDNS: "DNS", SANURI: "URI", SANURIPrefix: "URIPrefix"}

// MarshalText names the kind, for plans printed in golden files.
func (k SANKind) MarshalText() ([]byte, error) { return marshalName(sanKinds, int(k)) }

// UnmarshalText reads what MarshalText wrote.
func (k *SANKind) UnmarshalText(b []byte) error { return unmarshalName(sanKinds, b, (*int)(k)) }

// SANMatch is one subject alternative name a backend may present to be
// accepted (exact, or a URI prefix); it must present one of its SANMatches.
type SANMatch struct {
	Kind  SANKind `json:"kind"`
	Value string  `json:"value,omitempty"`
}

// UpstreamTLS is everything a cluster's TLS needs: one per accepted policy,
// shared by every port it governs.
type UpstreamTLS struct {
	SNI      string          `json:"sni,omitempty"`
	CASecret string          `json:"caSecret,omitempty"` // SDS secret with the trusted CAs; "" skips validation
	SANs     []SANMatch      `json:"sans,omitempty"`
	Params   tlsopts.Options `json:"params,omitempty"`
	// ClientCertificate is the SDS secret of the certificate Envoy
	// presents to the backend; "" presents none.
	ClientCertificate string `json:"clientCertificate,omitempty"`
}

// ClientCertificate is a certificate and key Envoy presents to backends,
// delivered as one SDS secret, so rotating it never rebuilds a cluster.
type ClientCertificate struct {
	SecretName string `json:"secretName"`
	Chain      []byte `json:"chain"`
	// Key is never printed, not even in a plan.
	Key []byte `json:"-"`
}

// CABundle is the trust a policy's clusters validate against, delivered
// as one SDS secret.
type CABundle struct {
	SecretName string `json:"secretName,omitempty"`
	PEM        string `json:"pem,omitempty"`        // the valid refs' certificates; "" for the system bundle
	SystemPath string `json:"systemPath,omitempty"` // set only for the system bundle
	// CRL is PEM revocation lists of the bundle's CAs; "" for none.
	CRL string `json:"crl,omitempty"`
}

// Zone is the ready addresses of one zone ("" when unknown), sorted and
// without duplicates.
type Zone struct {
	Name  string     `json:"name,omitempty"`
	Addrs []HostPort `json:"addrs,omitempty"`
}

// HostPort is one endpoint address.
type HostPort struct {
	Host string `json:"host,omitempty"`
	Port uint32 `json:"port,omitempty"`
}
