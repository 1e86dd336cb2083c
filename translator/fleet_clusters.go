package translator

import (
	"bytes"
	"slices"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator/envoy"
	"github.com/tlsplane/tlsplane/translator/gateway"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// fleetClusters is what a Gateway with a backend client certificate made
// of the clusters its routes reach: the fleet's own version of each.
type fleetClusters struct {
	variants *envoy.ClientVariants
	// reached are the names of the clusters the Gateway's routes reach,
	// sorted; a change to any other cluster leaves the fleet as it is.
	reached    []string
	reachedSet map[string]bool
	// made is, per reached cluster, the base it was made from and the
	// fleet's version (nil: served as the base is).
	made map[string]madeCluster
	// secret is the certificate's SDS secret, made from cert; nil when it
	// cannot be used.
	secret *tlsv3.Secret
	cert   *plan.ClientCertificate
}

type madeCluster struct{ base, own *clusterv3.Cluster }

// presentClientCertificates gives each Gateway fleet its own versions of
// the clusters its routes reach when its Gateway names a backend client
// certificate, from the base clusters (sorted by name). It looks again at
// a fleet that rebuilt says was rebuilt, or whose reached clusters include
// one of changed (nil: every cluster changed), and returns the fleets
// whose resources it changed; gw.fleets is copied before it is written.
func (gw *gatewayOutput) presentClientCertificates(parts *envoy.Parts, clusters []*clusterv3.Cluster, changed []string, rebuilt func(fleet string) bool) []string {
	if gw.judged == nil {
		return nil
	}
	var (
		reachOf  map[types.NamespacedName][]string // inverted Reach, made once when needed
		out      []string
		fleets   = copyOnWrite[string, *FleetResources]{m: gw.fleets}
		previous = gw.presenting
	)
	gw.presenting = map[string]*fleetClusters{}
	for _, gs := range gw.judged.Gateways {
		cert, configured := gs.BackendClientCertificate()
		name := gs.Fleet()
		fleet := fleets.m[name]
		if !configured || fleet == nil {
			continue
		}
		fc := previous[name]
		fresh := fc == nil || rebuilt(name)
		secretName := ""
		if cert != nil {
			secretName = cert.SecretName
		}
		if !fresh && fc.variants != nil && secretName == fc.variantsSecret() && !touches(fc.reachedSet, changed) {
			gw.presenting[name] = fc
			continue
		}
		if fc == nil {
			fc = &fleetClusters{}
		}
		if fresh || fc.reachedSet == nil {
			if reachOf == nil {
				reachOf = reachedClusters(gw.judged)
			}
			fc.reached = reachOf[gs.Name()]
			fc.reachedSet = make(map[string]bool, len(fc.reached))
			for _, n := range fc.reached {
				fc.reachedSet[n] = true
			}
		}
		if fc.variants == nil || fc.variantsSecret() != secretName {
			fc.made = nil // made for another certificate, or for failing closed
		}
		fc.variants = envoy.NewClientVariants(secretName, fc.variants)
		fc.keep(cert)
		own := fc.emit(parts, clusters)
		gw.presenting[name] = fc
		next := withOwnClusters(fleet, own, fc.secret, gs)
		if next != fleet {
			fleets.set(name, next, nil)
			out = append(out, name)
		}
	}
	gw.fleets = fleets.m
	return out
}

// keep makes the certificate's SDS secret, keeping the last one while
// its content is the same (the fleet's resources stay the same pointers).
func (fc *fleetClusters) keep(cert *plan.ClientCertificate) {
	switch {
	case cert == nil:
		fc.secret, fc.cert = nil, nil
	case fc.cert == nil || fc.cert.SecretName != cert.SecretName || !bytes.Equal(fc.cert.Chain, cert.Chain) || !bytes.Equal(fc.cert.Key, cert.Key):
		fc.secret, fc.cert = envoy.CertificateSecret(cert.SecretName, cert.Chain, cert.Key), cert
	}
}

// variantsSecret is the SDS secret the fleet's variants present ("": fail closed).
func (fc *fleetClusters) variantsSecret() string { return fc.variants.Secret() }

// emit makes the fleet's version of each reached cluster there is,
// keeping the last one made from the same base.
func (fc *fleetClusters) emit(parts *envoy.Parts, clusters []*clusterv3.Cluster) []*clusterv3.Cluster {
	var own []*clusterv3.Cluster
	made := make(map[string]madeCluster, len(fc.made))
	for _, name := range fc.reached {
		i, found := slices.BinarySearchFunc(clusters, name, func(c *clusterv3.Cluster, n string) int { return strings.Compare(c.Name, n) })
		if !found {
			continue
		}
		base := clusters[i]
		m, ok := fc.made[name]
		if !ok || m.base != base {
			// An error leaves the version failing closed: the base passed
			// Envoy's rules, so only an Envoy that rejects adding an SDS
			// certificate to a valid context would cause one.
			c, _ := parts.Presenting(base, fc.variants)
			m = madeCluster{base: base, own: c}
		}
		made[name] = m
		if m.own != nil {
			own = append(own, m.own)
		}
	}
	fc.made = made
	return own
}

// withOwnClusters is fleet with own as its clusters and the certificate's
// secret served when one of them presents it; fleet itself when nothing
// differs.
func withOwnClusters(fleet *FleetResources, own []*clusterv3.Cluster, secret *tlsv3.Secret, gs *gateway.Gateway) *FleetResources {
	name := plan.GatewayClientCertificateSecretName(gs.Name().Namespace, gs.Name().Name)
	secrets := slices.DeleteFunc(slices.Clone(fleet.Secrets), func(s *tlsv3.Secret) bool { return s.Name == name })
	if secret != nil && len(own) > 0 {
		// A secret no cluster reads would be withheld by ADS: served only
		// when a cluster presents it.
		secrets = append(secrets, secret)
		slices.SortFunc(secrets, func(a, b *tlsv3.Secret) int { return strings.Compare(a.Name, b.Name) })
	}
	if slices.Equal(own, fleet.Clusters) && slices.Equal(secrets, fleet.Secrets) {
		return fleet
	}
	return &FleetResources{Listeners: fleet.Listeners, Routes: fleet.Routes, Secrets: secrets, Clusters: own}
}

// reachedClusters inverts Reach: per Gateway, the names of the clusters
// its routes reach, sorted.
func reachedClusters(r *gateway.Result) map[types.NamespacedName][]string {
	out := map[types.NamespacedName][]string{}
	for b, gateways := range r.Reach {
		name := plan.ClusterName(b.Service.Namespace, b.Service.Name, b.Port)
		for _, g := range gateways {
			out[g] = append(out[g], name)
		}
	}
	for _, names := range out {
		slices.Sort(names)
	}
	return out
}

// touches: a changed name (nil: all) is in set.
func touches(set map[string]bool, changed []string) bool {
	if changed == nil {
		return true
	}
	for _, n := range changed {
		if set[n] {
			return true
		}
	}
	return false
}
