package envoy

import (
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// downstreamTLSContext terminates TLS with certificates delivered over SDS
// (ADS), so a certificate rotation changes only the secret. With cv, the
// client is asked for a certificate that must chain to the CA bundle
// cv.CASecret (over SDS as well); with cv.InsecureFallback it is asked
// for one, but one that is missing or does not verify lets it through.
func downstreamTLSContext(secrets []string, cv *plan.ClientValidation) *tlsv3.DownstreamTlsContext {
	common := &tlsv3.CommonTlsContext{AlpnProtocols: []string{"h2", "http/1.1"}}
	for _, name := range secrets {
		common.TlsCertificateSdsSecretConfigs = append(common.TlsCertificateSdsSecretConfigs,
			&tlsv3.SdsSecretConfig{Name: name, SdsConfig: adsConfigSource()})
	}
	ctx := &tlsv3.DownstreamTlsContext{CommonTlsContext: common}
	if cv == nil {
		return ctx
	}
	trust := tlsv3.CertificateValidationContext_VERIFY_TRUST_CHAIN
	if cv.InsecureFallback {
		trust = tlsv3.CertificateValidationContext_ACCEPT_UNTRUSTED
	}
	common.ValidationContextType = &tlsv3.CommonTlsContext_CombinedValidationContext{
		CombinedValidationContext: &tlsv3.CommonTlsContext_CombinedCertificateValidationContext{
			DefaultValidationContext:         &tlsv3.CertificateValidationContext{TrustChainVerification: trust},
			ValidationContextSdsSecretConfig: &tlsv3.SdsSecretConfig{Name: cv.CASecret, SdsConfig: adsConfigSource()},
		},
	}
	ctx.RequireClientCertificate = wrapperspb.Bool(!cv.InsecureFallback)
	return ctx
}
