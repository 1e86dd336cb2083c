package xds

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/tlsplane/tlsplane/snapshots"
)

// ClusterPlaceholder is replaced by a node's cluster (its fleet) in a
// FleetIdentity template.
const ClusterPlaceholder = "{cluster}"

// DefaultFleetIdentity is the SPIFFE ID a fleet's Envoys present by default.
const DefaultFleetIdentity = "spiffe://cluster.local/fleet/" + ClusterPlaceholder

// Security is how the server authenticates and authorizes Envoys. The zero
// value is plaintext with no identity check: only for loopback or an
// operator's explicit choice.
type Security struct {
	// TLS is the server's TLS configuration; nil serves plaintext.
	TLS *tls.Config
	// Fleet, when set, is checked on every request that names a node: the
	// peer's verified client certificate must carry the identity the rule
	// gives for the node's cluster.
	Fleet *FleetIdentity
}

// FleetIdentity is the rule binding a client certificate to the one fleet
// it may read: a template with exactly one {cluster}, compared for exact
// equality with each URI SAN and each DNS SAN.
type FleetIdentity struct {
	prefix, suffix string
	// mesh, when set, is the rule for mesh fleets instead (WithMesh).
	mesh *MeshIdentity
}

// WithMesh is f with mesh fleets (`Mesh/<namespace>`) bound to their
// workloads' ServiceAccounts by m instead of to f's template; nil keeps
// f's template for every fleet.
func (f *FleetIdentity) WithMesh(m *MeshIdentity) *FleetIdentity {
	g := *f
	g.mesh = m
	return &g
}

// ParseFleetIdentity checks a template such as
// "spiffe://example.org/fleet/{cluster}" or "{cluster}.fleet.example.org".
func ParseFleetIdentity(template string) (*FleetIdentity, error) {
	if strings.Count(template, ClusterPlaceholder) != 1 {
		return nil, fmt.Errorf("fleet identity %q: want exactly one %s", template, ClusterPlaceholder)
	}
	prefix, suffix, _ := strings.Cut(template, ClusterPlaceholder)
	return &FleetIdentity{prefix: prefix, suffix: suffix}, nil
}

// For is the identity a fleet's certificates must carry.
func (f *FleetIdentity) For(fleet string) string { return f.prefix + fleet + f.suffix }

func (f *FleetIdentity) String() string { return f.For(ClusterPlaceholder) }

// peerIdentity is what a stream's client proved in its TLS handshake.
type peerIdentity struct {
	addr string // the client's address, for logs
	tls  bool
	uris []string
	dns  []string
}

// identityOf reads the verified leaf certificate of a stream's peer; gRPC
// put it in the context after the handshake verified the chain.
func identityOf(ctx context.Context) peerIdentity {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return peerIdentity{}
	}
	id := peerIdentity{}
	if p.Addr != nil {
		id.addr = p.Addr.String()
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok {
		return id
	}
	id.tls = true
	leaf := verifiedLeaf(info.State)
	if leaf == nil {
		return id
	}
	for _, u := range leaf.URIs {
		id.uris = append(id.uris, u.String())
	}
	id.dns = append(id.dns, leaf.DNSNames...)
	return id
}

// authorize refuses a node its peer may not read. The error is a gRPC
// status, which the stream loop (stream.go) returns as the stream's
// status before it reads the feed, so nothing has been sent.
func (f *FleetIdentity) authorize(id peerIdentity, node *corev3.Node) error {
	fleet := snapshots.Fleet(node)
	if fleet == "" {
		return status.Error(codes.PermissionDenied, "node.cluster is empty: mutual TLS binds a certificate to a fleet, so the node must name one (--service-cluster)")
	}
	if !id.tls {
		return status.Errorf(codes.PermissionDenied, "fleet %q: no TLS client certificate", fleet)
	}
	if ns, ok := meshNamespace(fleet); ok && f.mesh != nil {
		return f.authorizeMesh(id, fleet, ns)
	}
	want := f.For(fleet)
	for _, u := range id.uris {
		if u == want {
			return nil
		}
	}
	// Exact, DNS SANs too: fleets are case-sensitive snapshot keys, so a
	// case-insensitive match would let "edge"'s certificate read "EDGE".
	for _, d := range id.dns {
		if d == want {
			return nil
		}
	}
	return status.Errorf(codes.PermissionDenied, "fleet %q: the client certificate does not carry the identity %q (its URI SANs %q, DNS SANs %q)", fleet, want, id.uris, id.dns)
}

// authorizeMesh admits a workload's certificate to the mesh fleet of
// namespace ns when one of its URI SANs names a ServiceAccount of ns.
func (f *FleetIdentity) authorizeMesh(id peerIdentity, fleet, ns string) error {
	for _, u := range id.uris {
		if _, ok := f.mesh.serviceAccountOf(ns, u); ok {
			return nil
		}
	}
	return status.Errorf(codes.PermissionDenied, "mesh fleet %q: the client certificate names no ServiceAccount of namespace %q (want %s with namespace %q; its URI SANs %q)", fleet, ns, f.mesh, ns, id.uris)
}

// admit applies the fleet rule to a stream's node (every ADS request, a
// metrics stream's first message); a refusal is counted and logged as
// "<what> refused". A nil FleetIdentity admits every node.
func (f *FleetIdentity) admit(what string, peer peerIdentity, node *corev3.Node, m *metrics, log *slog.Logger) error {
	if f == nil {
		return nil
	}
	err := f.authorize(peer, node)
	if err != nil {
		m.refused.Inc()
		log.Warn(what+" refused", "node", node.GetId(), "fleet", snapshots.Fleet(node), "error", err)
	}
	return err
}

// MutualTLS is Security requiring client certificates issued by the CA in
// clientCAFile and bound to their fleet by identityTemplate. The files are
// read now (an error here stops startup) and re-read when they change.
func MutualTLS(certFile, keyFile, clientCAFile, identityTemplate string, onReloadError func(error)) (Security, error) {
	if certFile == "" || keyFile == "" || clientCAFile == "" {
		return Security{}, errors.New("mutual TLS needs a certificate, its key and a client CA bundle")
	}
	fleet, err := ParseFleetIdentity(identityTemplate)
	if err != nil {
		return Security{}, err
	}
	files := newTLSFiles(certFile, keyFile, clientCAFile, onReloadError)
	if _, err := files.load(); err != nil {
		return Security{}, err
	}
	return Security{TLS: files.serverConfig(), Fleet: fleet}, nil
}

// verifiedLeaf is the leaf of the first verified chain, nil when the peer
// sent no certificate.
func verifiedLeaf(state tls.ConnectionState) *x509.Certificate {
	if len(state.VerifiedChains) == 0 || len(state.VerifiedChains[0]) == 0 {
		return nil
	}
	return state.VerifiedChains[0][0]
}
