package envoy

import (
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// ClientCertificateSecret is the SDS secret of a certificate Envoy
// presents to backends, checked together with the reference a cluster's
// UpstreamTlsContext makes to it (UpstreamTLS with ClientCertificate set):
// an error is what Envoy would reject of either, so a certificate that
// passes can be added to any context that passed without it.
func ClientCertificateSecret(c *plan.ClientCertificate) (*tlsv3.Secret, error) {
	secret := CertificateSecret(c.SecretName, c.Chain, c.Key)
	if err := secret.ValidateAll(); err != nil {
		return nil, err
	}
	ref := &tlsv3.SdsSecretConfig{Name: c.SecretName, SdsConfig: adsConfigSource()}
	if err := ref.ValidateAll(); err != nil {
		return nil, err
	}
	return secret, nil
}
