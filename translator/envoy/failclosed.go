package envoy

import (
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// failClosedCA is a self-signed CA whose private key was discarded right
// after it was made: no backend can present a certificate it signed.
const failClosedCA = `-----BEGIN CERTIFICATE-----
MIIBozCCAUmgAwIBAgIUQcL/6FPhtkWixig1fsCnMzd1C9MwCgYIKoZIzj0EAwIw
HjEcMBoGA1UEAwwTdGxzcGxhbmUgZmFpbGNsb3NlZDAgFw0yNjExMjIwNzMwMTNa
GA8yMTI2MTAyOTA3MzAxM1owHjEcMBoGA1UEAwwTdGxzcGxhbmUgZmFpbGNsb3Nl
ZDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABN7TNmNv6oYp6jg5V7ZwFVOyiV1u
N3WkiEdLlDElM81tYNd5BkIlrbydDUq1SlhvD8neJwaVq9zCYukYTkQwwpmjYzBh
MB0GA1UdDgQWBBQch6U2obgrF3SNTb/iMxU5+HYjtDAfBgNVHSMEGDAWgBQch6U2
obgrF3SNTb/iMxU5+HYjtDAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB/wQEAwIC
BDAKBggqhkjOPQQDAgNIADBFAiEA7B+2DK1TKli9iRK4UL4I6EGX+xGq7EfkVyQj
NuZa+GwCIGC+wauWVwUA3lMXOMtq7QFgXWIM9sr7N5TQ7qslX8XD
-----END CERTIFICATE-----
`

// failClosedSAN is under the reserved .invalid TLD (RFC 2606): no
// publicly trusted certificate can carry it.
const failClosedSAN = "policy-not-accepted.tlsplane.invalid"

// failClosedTLSContext is the TLS of a port whose policy is not accepted:
// every handshake fails, so requests get a 5xx instead of plaintext. It
// references no SDS secret, so the cluster never waits for one.
func failClosedTLSContext() *tlsv3.UpstreamTlsContext {
	return &tlsv3.UpstreamTlsContext{
		CommonTlsContext: &tlsv3.CommonTlsContext{
			TlsParams: &tlsv3.TlsParameters{
				TlsMinimumProtocolVersion: tlsv3.TlsParameters_TLSv1_2,
				TlsMaximumProtocolVersion: tlsv3.TlsParameters_TLSv1_3,
			},
			ValidationContextType: &tlsv3.CommonTlsContext_ValidationContext{
				ValidationContext: &tlsv3.CertificateValidationContext{
					TrustedCa: &corev3.DataSource{
						Specifier: &corev3.DataSource_InlineString{InlineString: failClosedCA},
					},
					MatchTypedSubjectAltNames: sanMatchers([]plan.SANMatch{{Kind: plan.SANDNS, Value: failClosedSAN}}),
				},
			},
		},
	}
}

// FailingClosed is c with the TLS of FailClosed in place of its own: the
// version of a cluster that must not be reached without a client
// certificate that cannot be used.
func (p *Parts) FailingClosed(c *clusterv3.Cluster) *clusterv3.Cluster {
	out := proto.Clone(c).(*clusterv3.Cluster)
	out.TransportSocket, out.TypedExtensionProtocolOptions = p.FailClosed.socket, p.FailClosed.protocolOptions
	return out
}
