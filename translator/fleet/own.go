package fleet

import (
	"bytes"
	"fmt"
	"slices"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlsplane/tlsplane/translator/envoy"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// Port is what one reached cluster was built from.
type Port struct {
	// Base is the cluster every other fleet is served.
	Base *clusterv3.Cluster
	Spec plan.Cluster
	// TLS is the policy's TLS plan Base was built from, shared by pointer
	// by every cluster of the policy (so one TLS is made per policy, not
	// per cluster); nil when Base is left as it is: plaintext, failing
	// closed already, or presenting its own policy's certificate, which
	// wins over a Gateway's, even a Gateway's that cannot be used.
	TLS *plan.UpstreamTLS
}

// Lookup finds the cluster of a name; false when there is none (a
// Service port without a cluster).
type Lookup func(name string) (Port, bool)

// Emitter is what the emitter shares with the engine's own clusters.
type Emitter struct {
	Parts       *envoy.Parts
	HTTPOptions *envoy.HTTPOptionsMemo
}

// Own is one fleet's own versions of the clusters its routes reach when
// its Gateway names a backend client certificate
// (spec.tls.backend.clientCertificateRef): the same clusters, under the
// same names, built by the emitter from the same plans with the
// certificate added to their TLS, or failing closed when the certificate
// cannot be used; route configurations stay as they are. It is kept
// between runs so that a change costs the clusters it touches.
type Own struct {
	// gateway names the Gateway in warnings.
	gateway string
	// secret is the SDS secret presented ("" fails closed); tls the TLS
	// made for it per policy plan.
	secret     string
	secretMade bool
	tls        map[*plan.UpstreamTLS]tlsMade
	// reached are the names of the clusters the Gateway's routes reach,
	// sorted; a change to any other cluster leaves the fleet as it is.
	reached    []string
	reachedSet map[string]bool
	// made is, per reached cluster, the base it was made from and the
	// fleet's version (nil: served as the base is); own lists those
	// versions in name order.
	made map[string]madeCluster
	own  []*clusterv3.Cluster
	// refused counts the versions in made that fail closed because Envoy
	// would reject them presenting the certificate.
	refused int
	// served is the certificate's SDS secret, made from cert; nil when it
	// cannot be used.
	served *tlsv3.Secret
	cert   *plan.ClientCertificate
}

type madeCluster struct {
	base, own *clusterv3.Cluster
	// refused says why own fails closed instead of presenting the
	// certificate (what Envoy would reject); "" when it does not.
	refused string
}

type tlsMade struct {
	tls envoy.ClusterTLS
	err error
}

// newOwn starts the fleet's clusters for Gateway gateway (namespace/name).
func newOwn(gateway string) *Own { return &Own{gateway: gateway} }

// present makes the fleet present cert (nil: the certificate cannot be
// used, its clusters fail closed); true when that differs from the last
// run's, and every reached cluster must be made again.
func (f *Own) present(cert *plan.ClientCertificate) bool {
	secret := ""
	if cert != nil {
		secret = cert.SecretName
	}
	changed := !f.secretMade || f.secret != secret
	if changed {
		f.made = nil // made for another certificate, or for failing closed
		f.secret, f.secretMade, f.tls = secret, true, map[*plan.UpstreamTLS]tlsMade{}
	}
	f.keep(cert)
	return changed
}

// reach makes names (sorted) the clusters the fleet's routes reach.
func (f *Own) reach(names []string) {
	f.reached = names
	f.reachedSet = make(map[string]bool, len(names))
	for _, n := range names {
		f.reachedSet[n] = true
	}
}

// touched are the names of changed (nil: every cluster) the fleet's
// routes reach.
func (f *Own) touched(changed []string) []string {
	if changed == nil {
		return f.reached
	}
	var out []string
	for _, n := range changed {
		if f.reachedSet[n] {
			out = append(out, n)
		}
	}
	return out
}

// keep makes the certificate's SDS secret, keeping the last one while
// its content is the same (the fleet's resources stay the same pointers).
func (f *Own) keep(cert *plan.ClientCertificate) {
	switch {
	case cert == nil:
		f.served, f.cert = nil, nil
	case f.cert == nil || f.cert.SecretName != cert.SecretName || !bytes.Equal(f.cert.Chain, cert.Chain) || !bytes.Equal(f.cert.Key, cert.Key):
		f.served, f.cert = envoy.CertificateSecret(cert.SecretName, cert.Chain, cert.Key), cert
	}
}

// emit makes the fleet's version of the reached clusters names (each
// that exists), keeping the last one made from the same base, then lists
// the fleet's own clusters in name order.
func (f *Own) emit(e Emitter, lookup Lookup, names []string) {
	whole := f.made == nil || len(names) == len(f.reached)
	if whole {
		// Made afresh: the versions of clusters no longer reached go.
		made := make(map[string]madeCluster, len(f.reached))
		for _, n := range f.reached {
			if m, ok := f.made[n]; ok {
				made[n] = m
			}
		}
		f.made = made
	}
	moved := whole // some version of the fleet's changed: list them again
	for _, name := range names {
		port, found := lookup(name)
		if !found {
			if _, ok := f.made[name]; ok {
				delete(f.made, name)
				moved = true
			}
			continue
		}
		if m, ok := f.made[name]; ok && (m.base == port.Base || proto.Equal(m.base, port.Base)) {
			// An endpoint change re-emits its port's cluster as it was:
			// the fleet's version stays the same pointer.
			m.base = port.Base
			f.made[name] = m
			continue
		}
		f.made[name] = f.build(e, port)
		moved = true
	}
	if !moved {
		return
	}
	own := make([]*clusterv3.Cluster, 0, len(f.own))
	f.refused = 0
	for _, name := range f.reached {
		m := f.made[name]
		if m.own != nil {
			own = append(own, m.own)
		}
		if m.refused != "" {
			f.refused++
		}
	}
	f.own = own
}

// build builds port's cluster presenting the certificate, or failing
// closed when it cannot be used; own is nil when the base is served as it
// is. Never without the certificate: a version Envoy would reject fails
// closed, and says why.
func (f *Own) build(e Emitter, port Port) madeCluster {
	m := madeCluster{base: port.Base}
	if port.TLS == nil {
		return m
	}
	if f.secret == "" {
		m.own = e.Parts.FailingClosed(port.Base)
		return m
	}
	made, seen := f.tls[port.TLS]
	if !seen {
		p := *port.TLS
		p.ClientCertificate = f.secret
		made.tls, made.err = envoy.UpstreamTLS(p, e.HTTPOptions)
		f.tls[port.TLS] = made
	}
	err := made.err
	if err == nil {
		if m.own, err = envoy.Cluster(port.Spec, made.tls, e.Parts); err == nil {
			return m
		}
	}
	m.own, m.refused = e.Parts.FailingClosed(port.Base), err.Error()
	return m
}

// warnings name each cluster that fails closed because Envoy would reject
// it presenting the certificate, sorted; nil for none.
func (f *Own) warnings() []string {
	if f.refused == 0 {
		return nil // the common case, without a look at every cluster
	}
	var out []string
	for _, name := range f.reached {
		if m := f.made[name]; m.refused != "" {
			out = append(out, fmt.Sprintf("Gateway %s spec.tls.backend.clientCertificateRef: SDS secret %s: cluster %s fails closed: Envoy would reject it presenting the certificate: %s", f.gateway, f.secret, name, m.refused))
		}
	}
	slices.Sort(out)
	return out
}
