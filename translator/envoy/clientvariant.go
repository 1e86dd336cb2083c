package envoy

import (
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// A Gateway's backend client certificate changes the clusters its routes
// reach, for its fleet only: the fleet is served its own version of each
// such cluster, under the same name, so route configurations stay as they
// are. The version is made from the emitted cluster, not from a plan: the
// transport socket is what every cluster of one policy shares, so one
// variant is made per policy, not per cluster.

// ClientVariants keeps, per transport socket, the socket that also
// presents one client certificate (SDS secret name), or that fails closed
// when the certificate cannot be used (secret ""); the value for a socket
// that gets neither is nil.
type ClientVariants struct {
	secret  string
	sockets map[*corev3.TransportSocket]*corev3.TransportSocket
	// earlier are the last run's, taken over as they are asked for, so
	// the sockets of policies gone are forgotten.
	earlier map[*corev3.TransportSocket]*corev3.TransportSocket
}

// NewClientVariants starts the variants for secret ("": failing closed);
// earlier's (may be nil) are reused when they are for the same secret.
func NewClientVariants(secret string, earlier *ClientVariants) *ClientVariants {
	v := &ClientVariants{secret: secret, sockets: map[*corev3.TransportSocket]*corev3.TransportSocket{}}
	if earlier != nil && earlier.secret == secret {
		v.earlier = earlier.sockets
	}
	return v
}

// Presenting is c presenting the client certificate (or failing closed),
// or nil when c is left as it is: plaintext (no TLS to present it in),
// failing closed already, or presenting its own policy's certificate,
// which wins over a Gateway's, even a Gateway's that cannot be used.
//
// An error says why c fails closed instead of presenting the certificate
// (what Envoy would reject); the cluster returned fails closed then.
func (p *Parts) Presenting(c *clusterv3.Cluster, v *ClientVariants) (_ *clusterv3.Cluster, err error) {
	socket := c.GetTransportSocket()
	if socket == nil || socket == p.FailClosed.socket {
		return nil, nil
	}
	variant, seen := v.sockets[socket]
	if !seen {
		if variant, seen = v.earlier[socket]; !seen {
			variant, err = p.variantOf(socket, v.secret)
			if err != nil {
				// Never without the certificate: a variant Envoy would
				// reject fails closed.
				variant = p.FailClosed.socket
			}
		}
		v.sockets[socket] = variant
	}
	if variant == nil {
		return nil, nil
	}
	out := proto.Clone(c).(*clusterv3.Cluster)
	out.TransportSocket = variant
	if variant == p.FailClosed.socket {
		out.TypedExtensionProtocolOptions = p.FailClosed.protocolOptions
	}
	return out, err
}

// variantOf is socket with the client certificate of SDS secret added to
// its UpstreamTlsContext (the fail-closed socket for secret ""); nil when
// it is not one, or presents a certificate already.
func (p *Parts) variantOf(socket *corev3.TransportSocket, secret string) (*corev3.TransportSocket, error) {
	cfg := socket.GetTypedConfig()
	if cfg == nil || !cfg.MessageIs((*tlsv3.UpstreamTlsContext)(nil)) {
		return nil, nil
	}
	ctx := &tlsv3.UpstreamTlsContext{}
	if err := cfg.UnmarshalTo(ctx); err != nil {
		return nil, err
	}
	common := ctx.GetCommonTlsContext()
	if common == nil || len(common.TlsCertificateSdsSecretConfigs) > 0 || len(common.TlsCertificates) > 0 {
		return nil, nil
	}
	if secret == "" {
		return p.FailClosed.socket, nil
	}
	common.TlsCertificateSdsSecretConfigs = []*tlsv3.SdsSecretConfig{{Name: secret, SdsConfig: adsConfigSource()}}
	if err := ctx.ValidateAll(); err != nil {
		return nil, err
	}
	packed, err := anypb.New(ctx)
	if err != nil {
		return nil, err
	}
	return &corev3.TransportSocket{Name: socket.Name, ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: packed}}, nil
}

// Secret is the SDS secret the variants present; "" when they fail closed.
func (v *ClientVariants) Secret() string { return v.secret }
