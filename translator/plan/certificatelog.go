package plan

// CertificateLog has a listener's Envoy report a sample of its upstream
// TLS connections to tlsplane's access log service: the certificate each
// backend presented and what was negotiated (the backend certificate
// inventory). A listener without one reports nothing.
type CertificateLog struct {
	// PerMillion of upstream requests (HTTP: each attempt) and connections
	// (TCP and TLS routes) are logged; between 1 and AllLogged.
	PerMillion uint32 `json:"perMillion"`
	// Cluster is the bootstrap's cluster that reaches tlsplane's gRPC
	// server (the xDS cluster): the log goes there.
	Cluster string `json:"cluster"`
}

// AllLogged is CertificateLog.PerMillion when every upstream request and
// connection is logged.
const AllLogged = 1_000_000

// The access log contract between the emitter and the access log service
// (package xds): the log's name, and the custom tags an entry carries.
const (
	// CertificateLogName is the log_name of every certificate log.
	CertificateLogName = "tlsplane.io/backend-certificates"
	// CertificateTag holds the backend's leaf certificate, URL-encoded
	// PEM (Envoy's %UPSTREAM_PEER_CERT%).
	CertificateTag = "tlsplane.io/peer-certificate"
	// TLSVersionTag and TLSCipherTag hold what was negotiated, as Envoy
	// names them ("TLSv1.3", "TLS_AES_128_GCM_SHA256").
	TLSVersionTag = "tlsplane.io/tls-version"
	TLSCipherTag  = "tlsplane.io/tls-cipher"
)
