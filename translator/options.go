package translator

import (
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// OptionPrefix is the domain of the spec.options keys tlsplane implements.
const OptionPrefix = "tlsplane.io/"

// TLSOptions is a policy's spec.options, parsed and checked against what
// Envoy 1.40 accepts. The zero value is not meaningful: use ParseOptions.
type TLSOptions struct {
	MinimumVersion      tlsv3.TlsParameters_TlsProtocol // default TLSv1_2
	MaximumVersion      tlsv3.TlsParameters_TlsProtocol // default TLSv1_3
	Ciphers             []string                        // BoringSSL names, TLS <= 1.2 only; nil = Envoy default
	ECDHCurves          []string                        // order kept; nil = Envoy default
	SignatureAlgorithms []string                        // nil = Envoy default
	// CertificateHashes are SHA-256 fingerprints, normalised to 64 upper-case
	// hex characters; pins in addition to CA validation.
	CertificateHashes       []string
	AllowExpiredCertificate bool
	ALPNProtocols           []string
	InsecureSkipVerify      bool
}

// ParseOptions parses and validates spec.options. Keys under other domains
// than tlsplane.io/ are ignored; un-prefixed keys (reserved by Gateway API)
// and unknown tlsplane.io/ keys are errors. allowInsecure is the control
// plane's opt-in for tlsplane.io/insecureSkipVerify. The error names the key
// and the bad value, e.g.
//
//	option tlsplane.io/ciphers: "TLS_AES_128_GCM_SHA256" is a TLS 1.3 suite
func ParseOptions(options map[gwv1.AnnotationKey]gwv1.AnnotationValue, allowInsecure bool) (TLSOptions, error) {
	panic("ParseOptions: being written (issue 2)")
}
