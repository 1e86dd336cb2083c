package plan

import "github.com/tlsplane/tlsplane/translator/tlsopts"

// Cluster is one Service port as Envoy should see it; its TLS is chosen
// by the engine (a policy's, fail-closed, h2c or none).
type Cluster struct {
	Name string
	// ExternalName, with Port, makes a DNS cluster (an ExternalName
	// Service); otherwise the cluster's endpoints come over EDS.
	ExternalName string
	Port         uint32
}

// SANKind is the kind of a subject alternative name to match.
type SANKind int

const (
	SANDNS SANKind = iota
	SANURI
)

// SANMatch is one exact subject alternative name a backend must present.
type SANMatch struct {
	Kind  SANKind
	Value string
}

// UpstreamTLS is everything a cluster's TLS needs: one per accepted policy,
// shared by every port it governs.
type UpstreamTLS struct {
	SNI      string
	CASecret string // SDS secret with the trusted CAs; "" skips validation
	SANs     []SANMatch
	Params   tlsopts.Options
}

// CABundle is the trust a policy's clusters validate against, delivered
// as one SDS secret.
type CABundle struct {
	SecretName string
	PEM        string // the valid refs' certificates; "" for the system bundle
	SystemPath string // set only for the system bundle
}

// Zone is the ready addresses of one zone ("" when unknown), sorted and
// without duplicates.
type Zone struct {
	Name  string
	Addrs []HostPort
}

// HostPort is one endpoint address.
type HostPort struct {
	Host string
	Port uint32
}
