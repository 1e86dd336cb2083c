package envoy

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// CASecret is the SDS secret of a CA bundle: inline PEM for refs, the host's
// file for the system bundle (the translator reads no files), and the
// bundle's revocation lists, so a new list is an SDS update alone.
func CASecret(b plan.CABundle) *tlsv3.Secret {
	source := &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: b.PEM}}
	if b.PEM == "" {
		source = &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: b.SystemPath}}
	}
	validation := &tlsv3.CertificateValidationContext{TrustedCa: source}
	if b.CRL != "" {
		validation.Crl = &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: b.CRL}}
	}
	return &tlsv3.Secret{
		Name: b.SecretName,
		Type: &tlsv3.Secret_ValidationContext{ValidationContext: validation},
	}
}

// CertificateSecret is a listener certificate's SDS secret: chain and
// private key inline (the translator reads no files).
func CertificateSecret(name string, chain, key []byte) *tlsv3.Secret {
	return &tlsv3.Secret{
		Name: name,
		Type: &tlsv3.Secret_TlsCertificate{TlsCertificate: &tlsv3.TlsCertificate{
			CertificateChain: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: chain}},
			PrivateKey:       &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: key}},
		}},
	}
}
