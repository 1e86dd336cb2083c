package translator

import (
	"slices"
	"sort"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/fleet"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/outputpatch"
)

// output patches the last Output into this one, with the XBackends'
// statuses xbackends; e makes the Gateway fleets' own clusters. (The
// statuses are not a field of u: a map of u stored into the Output would
// make every map of u escape to the heap, 19 allocations per Update.)
func (w *world) output(u *update, xbackends map[types.NamespacedName]gwxv1a1.BackendStatus, generation uint64, e fleet.Emitter) Output {
	prev := w.out
	out := prev
	out.Generation = generation
	changed := &ResourceChanges{Since: prev.Generation}
	out.Changed = changed

	clusters, producers, endpoints, secrets := w.current(u)
	out.Clusters, changed.Clusters = outputpatch.Sorted(prev.Clusters, clusters, (*clusterv3.Cluster).GetName)
	out.Endpoints, changed.Endpoints = outputpatch.Sorted(prev.Endpoints, endpoints, (*endpointv3.ClusterLoadAssignment).GetClusterName)
	out.Secrets, changed.Secrets = outputpatch.Sorted(prev.Secrets, secrets, (*tlsv3.Secret).GetName)
	w.remakeOwnClusters(u, e, changed.Clusters)

	origins := outputpatch.Map[string, []types.NamespacedName]{M: prev.Origins}
	namespaces := outputpatch.Map[string, string]{M: prev.ClusterNamespaces}
	for name := range u.clusters {
		p := producers[name]
		if p == nil {
			origins.Delete(name)
			if ns, ok := w.xbackends.namespaces[name]; ok {
				namespaces.Set(name, ns, func(a, b string) bool { return a == b })
			} else {
				namespaces.Delete(name)
			}
			continue
		}
		namespaces.Set(name, p.namespace, func(a, b string) bool { return a == b })
		if p.policy == nil {
			origins.Delete(name)
		} else {
			origins.Set(name, []types.NamespacedName{p.policy.verdict.Name}, slices.Equal)
		}
	}
	notAfter := outputpatch.Map[string, time.Time]{M: prev.CANotAfter}
	for name := range u.secrets {
		use := w.secrets[name]
		if use == nil {
			origins.Delete(name)
			if at, ok := w.xbackends.caNotAfter[name]; ok && w.xbackends.secrets[name] != nil {
				notAfter.Set(name, at, time.Time.Equal)
			} else {
				notAfter.Delete(name)
			}
			continue
		}
		origins.Set(name, sortedPolicyNames(use.policies), slices.Equal)
		if use.notAfter.IsZero() {
			notAfter.Delete(name)
		} else {
			notAfter.Set(name, use.notAfter, time.Time.Equal)
		}
	}
	out.Origins, out.ClusterNamespaces, out.CANotAfter = origins.M, namespaces.M, notAfter.M
	if u.xbackends {
		out.XBackendOrigins = w.xbackends.origins
	}

	statuses := outputpatch.Map[types.NamespacedName, gwv1.PolicyStatus]{M: prev.Statuses}
	for nn := range u.statuses {
		if w.verdicts[nn] == nil {
			statuses.Delete(nn)
		}
	}
	for nn, st := range u.newStatuses {
		statuses.Set(nn, st, nil)
	}
	out.Statuses = statuses.M

	if u.crlWants || u.xbackends {
		out.CRLDistributionPoints = w.crlDistributionPoints()
	}
	if u.warnings {
		out.Warnings = expandSorted(w.warnings)
	}
	if u.fleetsDirty {
		out.Fleets, out.GatewayAPI = w.gateways.fleets, w.gateways.statuses
		names := u.changedFleets
		if names == nil {
			names = map[string]bool{}
			for name := range prev.Fleets {
				names[name] = true
			}
			for name := range out.Fleets {
				names[name] = true
			}
		}
		changed.Fleets = input.SortedNames(names)
	}
	out.GatewayAPI.XBackends = xbackends
	w.out = out
	return out
}

// remakeOwnClusters redoes the own clusters of the Gateway fleets this
// update rebuilt, or whose reached clusters changed; a fleet it changes is
// a changed fleet.
func (w *world) remakeOwnClusters(u *update, e fleet.Emitter, changed []string) {
	gw := &w.gateways
	if gw.ownClusters == nil && !fleet.AnyPresents(gw.judged) {
		return // the common case: no Gateway names a backend client certificate
	}
	since := func(name string) fleet.Change {
		rebuilt := u.fleetsDirty && (u.changedFleets == nil || u.changedFleets[name])
		// Only a whole run of the Gateway rules (changedFleets nil) or a
		// route patch that moved some Gateway's reach changes what a
		// fleet's routes reach.
		return fleet.Change{Rebuilt: rebuilt, Reach: u.reachChanged || u.fleetsDirty && u.changedFleets == nil}
	}
	if changed == nil {
		changed = []string{} // nil would say every cluster changed
	}
	old := fleet.Warnings(gw.ownClusters)
	var fleets []string
	gw.fleets, gw.ownClusters, fleets = fleet.MakeOwnClusters(gw.judged, gw.fleets, gw.ownClusters, e, portLookup(w.producers), changed, since)
	if warnings := fleet.Warnings(gw.ownClusters); !slices.Equal(old, warnings) {
		w.countWarnings(old, -1)
		w.countWarnings(warnings, 1)
		u.warnings = true
	}
	if len(fleets) == 0 {
		return
	}
	u.fleetsDirty = true
	if u.changedFleets != nil {
		for _, name := range fleets {
			u.changedFleets[name] = true
		}
	}
}

// current is, for each name the update touched, its resource now (nil
// when no port produces it any more), and the port producing each cluster.
func (w *world) current(u *update) (map[string]*clusterv3.Cluster, map[string]*portOutput,
	map[string]*endpointv3.ClusterLoadAssignment, map[string]*tlsv3.Secret) {
	clusters := make(map[string]*clusterv3.Cluster, len(u.clusters))
	producers := make(map[string]*portOutput, len(u.clusters))
	endpoints := make(map[string]*endpointv3.ClusterLoadAssignment, len(u.endpoints))
	secrets := make(map[string]*tlsv3.Secret, len(u.secrets))
	for name := range u.clusters {
		clusters[name] = nil
	}
	for name := range u.endpoints {
		endpoints[name] = nil
	}
	for svc := range u.services {
		ports := w.ports[svc]
		for i := range ports {
			p := &ports[i]
			if p.cluster == nil {
				continue
			}
			clusters[p.cluster.Name], producers[p.cluster.Name] = p.cluster, p
			if p.endpoint != nil {
				endpoints[p.endpoint.ClusterName] = p.endpoint
			}
		}
	}
	for name := range u.secrets {
		secrets[name] = nil
		if use := w.secrets[name]; use != nil {
			secrets[name] = use.secret
		} else if s := w.xbackends.secrets[name]; s != nil {
			secrets[name] = s
		}
	}
	for name := range u.clusters {
		if clusters[name] == nil && w.xbackends.clusters[name] != nil {
			clusters[name] = w.xbackends.clusters[name]
		}
	}
	return clusters, producers, endpoints, secrets
}

func sortedPolicyNames(m map[types.NamespacedName]int) []types.NamespacedName {
	out := make([]types.NamespacedName, 0, len(m))
	for nn := range m {
		out = append(out, nn)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// expandSorted lists each warning as many times as it is counted, sorted.
func expandSorted(counts map[string]int) []string {
	var out []string
	for _, warning := range input.SortedNames(counts) {
		for range counts[warning] {
			out = append(out, warning)
		}
	}
	return out
}
