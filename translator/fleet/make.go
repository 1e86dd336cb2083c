package fleet

import (
	"slices"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator/gateway"
	"github.com/tlsplane/tlsplane/translator/outputpatch"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// Change is what may have changed for one fleet since its own clusters
// were made.
type Change struct {
	Rebuilt bool // its resources are new: its own clusters go onto them
	Reach   bool // the clusters its routes reach may be others
}

// MakeOwnClusters gives each Gateway fleet its own versions of the
// clusters its routes reach when its Gateway names a backend client
// certificate, from the clusters lookup finds, and returns the fleets
// (fleets itself when none changed, else a copy), the own clusters of
// each fleet that has some (previous are the last run's, reused) and the
// names of the fleets it changed. changed names the clusters that changed
// (nil: all of them); since says what else changed per fleet. A route
// patch costs a fleet the Service ports it reaches (reach), a cluster
// change the clusters that changed.
func MakeOwnClusters(judged *gateway.Result, fleets map[string]*Resources, previous map[string]*Own,
	e Emitter, lookup Lookup, changed []string, since func(fleet string) Change) (map[string]*Resources, map[string]*Own, []string) {
	if judged == nil {
		return fleets, previous, nil
	}
	var (
		reachOf map[types.NamespacedName][]string // inverted Reach, made once when needed
		out     []string
		next    = outputpatch.Map[string, *Resources]{M: fleets}
		owns    map[string]*Own // allocated for the first Gateway that presents one
	)
	for _, gs := range judged.Gateways {
		cert, configured := gs.BackendClientCertificate()
		if !configured {
			continue
		}
		name := gs.Fleet()
		fleet := next.M[name]
		if fleet == nil {
			continue
		}
		if owns == nil {
			owns = map[string]*Own{}
		}
		fc, ch := previous[name], since(name)
		if fc == nil {
			fc, ch.Reach = newOwn(gs.Name().String()), true
		}
		owns[name] = fc
		touched := fc.touched(changed)
		certChanged := fc.present(cert)
		if !ch.Rebuilt && !ch.Reach && !certChanged && len(touched) == 0 {
			continue
		}
		if ch.Reach {
			if reachOf == nil {
				reachOf = reachedClusters(judged)
			}
			fc.reach(reachOf[gs.Name()])
		}
		switch {
		case ch.Reach || certChanged || changed == nil:
			fc.emit(e, lookup, fc.reached)
		case len(touched) > 0:
			fc.emit(e, lookup, touched)
		}
		withOwn := withOwnClusters(fleet, fc.own, fc.served, gs)
		if withOwn != fleet {
			next.Set(name, withOwn, nil)
			out = append(out, name)
		}
	}
	return next.M, owns, out
}

// withOwnClusters is fleet with own as its clusters and the certificate's
// secret served when one of them presents it; fleet itself when nothing
// differs.
func withOwnClusters(fleet *Resources, own []*clusterv3.Cluster, secret *tlsv3.Secret, gs *gateway.Gateway) *Resources {
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
	return &Resources{Listeners: fleet.Listeners, Routes: fleet.Routes, Secrets: secrets, Clusters: own, Reached: fleet.Reached}
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

// AnyPresents: some Gateway judged names a backend client certificate.
func AnyPresents(judged *gateway.Result) bool {
	if judged == nil {
		return false
	}
	for _, gs := range judged.Gateways {
		if _, configured := gs.BackendClientCertificate(); configured {
			return true
		}
	}
	return false
}

// Warnings are the warnings of every fleet's own clusters, sorted.
func Warnings(owns map[string]*Own) []string {
	var out []string
	for _, fc := range owns {
		out = append(out, fc.warnings()...)
	}
	slices.Sort(out)
	return out
}
