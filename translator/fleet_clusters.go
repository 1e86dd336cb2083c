package translator

import (
	"slices"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator/fleetclusters"
	"github.com/tlsplane/tlsplane/translator/gateway"
	"github.com/tlsplane/tlsplane/translator/outputpatch"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// fleetChange is what may have changed for one fleet since its own
// clusters were made.
type fleetChange struct {
	rebuilt bool // its resources are new: its own clusters go onto them
	reach   bool // the clusters its routes reach may be others
}

// everyFleet: a whole translation built every fleet anew.
func everyFleet(string) fleetChange { return fleetChange{rebuilt: true, reach: true} }

// makeOwnClusters gives each Gateway fleet its own versions of the
// clusters its routes reach when its Gateway names a backend client
// certificate (package fleetclusters), from the clusters lookup finds.
// changed names the clusters that changed (nil: all of them); since says
// what else changed per fleet. It returns the fleets whose resources it
// changed; gw.fleets is copied before it is written. A route patch costs a
// fleet the Service ports it reaches (reach), a cluster change the
// clusters that changed.
func (gw *gatewayOutput) makeOwnClusters(e fleetclusters.Emitter, lookup fleetclusters.Lookup, changed []string, since func(fleet string) fleetChange) []string {
	if gw.judged == nil {
		return nil
	}
	var (
		reachOf  map[types.NamespacedName][]string // inverted Reach, made once when needed
		out      []string
		fleets   = outputpatch.Map[string, *FleetResources]{M: gw.fleets}
		previous = gw.ownClusters
	)
	gw.ownClusters = nil // allocated for the first Gateway that presents one
	for _, gs := range gw.judged.Gateways {
		cert, configured := gs.BackendClientCertificate()
		if !configured {
			continue
		}
		name := gs.Fleet()
		fleet := fleets.M[name]
		if fleet == nil {
			continue
		}
		if gw.ownClusters == nil {
			gw.ownClusters = map[string]*fleetclusters.Fleet{}
		}
		fc, ch := previous[name], since(name)
		if fc == nil {
			fc, ch.reach = fleetclusters.New(gs.Name().String()), true
		}
		gw.ownClusters[name] = fc
		touched := fc.Touched(changed)
		certChanged := fc.Present(cert)
		if !ch.rebuilt && !ch.reach && !certChanged && len(touched) == 0 {
			continue
		}
		if ch.reach {
			if reachOf == nil {
				reachOf = reachedClusters(gw.judged)
			}
			fc.Reach(reachOf[gs.Name()])
		}
		switch {
		case ch.reach || certChanged || changed == nil:
			fc.Emit(e, lookup, fc.Reached())
		case len(touched) > 0:
			fc.Emit(e, lookup, touched)
		}
		next := withOwnClusters(fleet, fc.Own(), fc.Secret(), gs)
		if next != fleet {
			fleets.Set(name, next, nil)
			out = append(out, name)
		}
	}
	gw.fleets = fleets.M
	return out
}

// ownClusterWarnings are the warnings of every fleet's own clusters.
func (gw *gatewayOutput) ownClusterWarnings() []string {
	var out []string
	for _, fc := range gw.ownClusters {
		out = append(out, fc.Warnings()...)
	}
	return out
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
