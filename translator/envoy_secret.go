package translator

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
)

// caSecret is the SDS secret of a CA bundle: inline PEM for refs, the host's
// file for the system bundle (the translator reads no files).
func caSecret(b *caBundle) *tlsv3.Secret {
	source := &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: b.pem}}
	if b.pem == "" {
		source = &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: b.systemPath}}
	}
	return &tlsv3.Secret{
		Name: b.secretName,
		Type: &tlsv3.Secret_ValidationContext{
			ValidationContext: &tlsv3.CertificateValidationContext{TrustedCa: source},
		},
	}
}
