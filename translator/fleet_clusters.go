package translator

import (
	"bytes"
	"slices"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
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
	// fleet's version (nil: served as the base is); own lists those
	// versions in name order.
	made map[string]madeCluster
	own  []*clusterv3.Cluster
	// secret is the certificate's SDS secret, made from cert; nil when it
	// cannot be used.
	secret *tlsv3.Secret
	cert   *plan.ClientCertificate
}

type madeCluster struct{ base, own *clusterv3.Cluster }

// fleetChange is what may have changed for one fleet since its own
// clusters were made.
type fleetChange struct {
	rebuilt bool // its resources are new: its own clusters go onto them
	reach   bool // the clusters its routes reach may be others
}

// presentClientCertificates gives each Gateway fleet its own versions of
// the clusters its routes reach when its Gateway names a backend client
// certificate, from the base clusters (sorted by name). changed names the
// base clusters that changed (nil: all of them); since says what else
// changed per fleet. It returns the fleets whose resources it changed;
// gw.fleets is copied before it is written. A route patch costs a fleet
// the Service ports it reaches (reach), a cluster change the clusters that
// changed.
func (gw *gatewayOutput) presentClientCertificates(parts *envoy.Parts, clusters []*clusterv3.Cluster, changed []string, since func(fleet string) fleetChange) []string {
	if gw.judged == nil {
		return nil
	}
	var (
		reachOf  map[types.NamespacedName][]string // inverted Reach, made once when needed
		out      []string
		fleets   = copyOnWrite[string, *FleetResources]{m: gw.fleets}
		previous = gw.presenting
	)
	gw.presenting = nil // allocated for the first Gateway that presents one
	for _, gs := range gw.judged.Gateways {
		cert, configured := gs.BackendClientCertificate()
		if !configured {
			continue
		}
		name := gs.Fleet()
		fleet := fleets.m[name]
		if fleet == nil {
			continue
		}
		if gw.presenting == nil {
			gw.presenting = map[string]*fleetClusters{}
		}
		secretName := ""
		if cert != nil {
			secretName = cert.SecretName
		}
		fc, ch := previous[name], since(name)
		if fc == nil {
			fc, ch.reach = &fleetClusters{}, true
		}
		gw.presenting[name] = fc
		certChanged := fc.variants == nil || fc.variants.Secret() != secretName
		touched := fc.touched(changed)
		if !ch.rebuilt && !ch.reach && !certChanged && len(touched) == 0 {
			continue
		}
		if certChanged {
			fc.made = nil // made for another certificate, or for failing closed
			fc.variants = envoy.NewClientVariants(secretName, fc.variants)
		}
		fc.keep(cert)
		if ch.reach {
			if reachOf == nil {
				reachOf = reachedClusters(gw.judged)
			}
			fc.reach(reachOf[gs.Name()])
		}
		switch {
		case ch.reach || certChanged || changed == nil:
			fc.emit(parts, clusters, fc.reached)
		case len(touched) > 0:
			fc.emit(parts, clusters, touched)
		}
		next := withOwnClusters(fleet, fc.own, fc.secret, gs)
		if next != fleet {
			fleets.set(name, next, nil)
			out = append(out, name)
		}
	}
	gw.fleets = fleets.m
	return out
}

// reach makes names (sorted) the clusters the fleet's routes reach.
func (fc *fleetClusters) reach(names []string) {
	fc.reached = names
	fc.reachedSet = make(map[string]bool, len(names))
	for _, n := range names {
		fc.reachedSet[n] = true
	}
}

// touched are the names of changed (nil: every cluster) the fleet's
// routes reach.
func (fc *fleetClusters) touched(changed []string) []string {
	if changed == nil {
		return fc.reached
	}
	var out []string
	for _, n := range changed {
		if fc.reachedSet[n] {
			out = append(out, n)
		}
	}
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

// emit makes the fleet's version of the reached clusters names (each
// that exists), keeping the last one made from the same base, then lists
// the fleet's own clusters in name order.
func (fc *fleetClusters) emit(parts *envoy.Parts, clusters []*clusterv3.Cluster, names []string) {
	whole := fc.made == nil || len(names) == len(fc.reached)
	if whole {
		// Made afresh: the versions of clusters no longer reached go.
		made := make(map[string]madeCluster, len(fc.reached))
		for _, n := range fc.reached {
			if m, ok := fc.made[n]; ok {
				made[n] = m
			}
		}
		fc.made = made
	}
	moved := whole // some version of the fleet's changed: list them again
	for _, name := range names {
		i, found := slices.BinarySearchFunc(clusters, name, func(c *clusterv3.Cluster, n string) int { return strings.Compare(c.Name, n) })
		if !found {
			if _, ok := fc.made[name]; ok {
				delete(fc.made, name)
				moved = true
			}
			continue
		}
		base := clusters[i]
		if m, ok := fc.made[name]; ok && (m.base == base || proto.Equal(m.base, base)) {
			// An endpoint change re-emits its port's cluster as it was:
			// the fleet's version stays the same pointer.
			fc.made[name] = madeCluster{base: base, own: m.own}
			continue
		}
		// An error leaves the version failing closed: the base passed
		// Envoy's rules, so only an Envoy that rejects adding an SDS
		// certificate to a valid context would cause one.
		c, _ := parts.Presenting(base, fc.variants)
		fc.made[name] = madeCluster{base: base, own: c}
		moved = true
	}
	if !moved {
		return
	}
	own := make([]*clusterv3.Cluster, 0, len(fc.own))
	for _, name := range fc.reached {
		if m := fc.made[name]; m.own != nil {
			own = append(own, m.own)
		}
	}
	fc.own = own
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
	return &FleetResources{Listeners: fleet.Listeners, Routes: fleet.Routes, Secrets: secrets, Clusters: own, Reached: fleet.Reached}
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

// anyPresents: some Gateway judged names a backend client certificate.
func (gw *gatewayOutput) anyPresents() bool {
	if gw.judged == nil {
		return false
	}
	for _, gs := range gw.judged.Gateways {
		if _, configured := gs.BackendClientCertificate(); configured {
			return true
		}
	}
	return false
}
