package envoy

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// tlsTransportSocketName is Envoy's TLS transport socket extension.
const tlsTransportSocketName = "envoy.transport_sockets.tls"

// upstreamTLSContext builds the UpstreamTlsContext of an accepted policy:
// validation rules inline, trusted CAs over SDS (ADS), so a CA rotation
// changes only the secret.
func upstreamTLSContext(t plan.UpstreamTLS) *tlsv3.UpstreamTlsContext {
	common := &tlsv3.CommonTlsContext{
		TlsParams: &tlsv3.TlsParameters{
			TlsMinimumProtocolVersion: t.Params.MinimumVersion,
			TlsMaximumProtocolVersion: t.Params.MaximumVersion,
			CipherSuites:              t.Params.Ciphers,
			EcdhCurves:                t.Params.ECDHCurves,
			SignatureAlgorithms:       t.Params.SignatureAlgorithms,
		},
		AlpnProtocols: t.Params.ALPNProtocols,
	}
	if t.ClientCertificate != "" {
		common.TlsCertificateSdsSecretConfigs = []*tlsv3.SdsSecretConfig{{Name: t.ClientCertificate, SdsConfig: adsConfigSource()}}
	}
	if t.CASecret != "" && !t.Params.InsecureSkipVerify {
		common.ValidationContextType = &tlsv3.CommonTlsContext_CombinedValidationContext{
			CombinedValidationContext: &tlsv3.CommonTlsContext_CombinedCertificateValidationContext{
				DefaultValidationContext: &tlsv3.CertificateValidationContext{
					MatchTypedSubjectAltNames: sanMatchers(t.SANs),
					VerifyCertificateHash:     t.Params.CertificateHashes,
					AllowExpiredCertificate:   t.Params.AllowExpiredCertificate,
				},
				ValidationContextSdsSecretConfig: &tlsv3.SdsSecretConfig{
					Name:      t.CASecret,
					SdsConfig: adsConfigSource(),
				},
			},
		}
	}
	return &tlsv3.UpstreamTlsContext{CommonTlsContext: common, Sni: t.SNI}
}

func sanMatchers(sans []plan.SANMatch) []*tlsv3.SubjectAltNameMatcher {
	out := make([]*tlsv3.SubjectAltNameMatcher, 0, len(sans))
	for _, s := range sans {
		m := &tlsv3.SubjectAltNameMatcher{
			SanType: tlsv3.SubjectAltNameMatcher_DNS,
			Matcher: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: s.Value}},
		}
		switch s.Kind {
		case plan.SANURI:
			m.SanType = tlsv3.SubjectAltNameMatcher_URI
		case plan.SANURIPrefix:
			m.SanType = tlsv3.SubjectAltNameMatcher_URI
			m.Matcher = &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: s.Value}}
		}
		out = append(out, m)
	}
	return out
}

// adsConfigSource says "this resource comes over the same ADS stream".
func adsConfigSource() *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
		ResourceApiVersion:    corev3.ApiVersion_V3,
	}
}
