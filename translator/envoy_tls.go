package translator

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
)

// tlsTransportSocketName is Envoy's TLS transport socket extension.
const tlsTransportSocketName = "envoy.transport_sockets.tls"

// sanKind is the kind of a subject alternative name to match.
type sanKind int

const (
	sanDNS sanKind = iota
	sanURI
)

// sanMatch is one exact subject alternative name a backend must present.
type sanMatch struct {
	kind  sanKind
	value string
}

// upstreamTLS is everything a cluster's TLS needs, free of Kubernetes types.
type upstreamTLS struct {
	sni      string
	caSecret string // SDS secret with the trusted CAs; "" skips validation
	sans     []sanMatch
	params   TLSOptions
}

// upstreamTLSContext builds the UpstreamTlsContext of an accepted policy:
// validation rules inline, trusted CAs over SDS (ADS), so a CA rotation
// changes only the secret.
func upstreamTLSContext(t upstreamTLS) *tlsv3.UpstreamTlsContext {
	common := &tlsv3.CommonTlsContext{
		TlsParams: &tlsv3.TlsParameters{
			TlsMinimumProtocolVersion: t.params.MinimumVersion,
			TlsMaximumProtocolVersion: t.params.MaximumVersion,
			CipherSuites:              t.params.Ciphers,
			EcdhCurves:                t.params.ECDHCurves,
			SignatureAlgorithms:       t.params.SignatureAlgorithms,
		},
		AlpnProtocols: t.params.ALPNProtocols,
	}
	if t.caSecret != "" && !t.params.InsecureSkipVerify {
		common.ValidationContextType = &tlsv3.CommonTlsContext_CombinedValidationContext{
			CombinedValidationContext: &tlsv3.CommonTlsContext_CombinedCertificateValidationContext{
				DefaultValidationContext: &tlsv3.CertificateValidationContext{
					MatchTypedSubjectAltNames: sanMatchers(t.sans),
					VerifyCertificateHash:     t.params.CertificateHashes,
					AllowExpiredCertificate:   t.params.AllowExpiredCertificate,
				},
				ValidationContextSdsSecretConfig: &tlsv3.SdsSecretConfig{
					Name:      t.caSecret,
					SdsConfig: adsConfigSource(),
				},
			},
		}
	}
	return &tlsv3.UpstreamTlsContext{CommonTlsContext: common, Sni: t.sni}
}

func sanMatchers(sans []sanMatch) []*tlsv3.SubjectAltNameMatcher {
	out := make([]*tlsv3.SubjectAltNameMatcher, 0, len(sans))
	for _, s := range sans {
		sanType := tlsv3.SubjectAltNameMatcher_DNS
		if s.kind == sanURI {
			sanType = tlsv3.SubjectAltNameMatcher_URI
		}
		out = append(out, &tlsv3.SubjectAltNameMatcher{
			SanType: sanType,
			Matcher: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: s.value}},
		})
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
