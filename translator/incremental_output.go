package translator

import (
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/fleetclusters"
	"github.com/tlsplane/tlsplane/translator/input"
)

// An Output is read-only once returned, and the publisher keeps the last
// one while Update makes the next: every slice and map Update changes is a
// copy, made once per Update and only when something in it changed.

// setStatus records a policy's new status when it differs from the last.
func (u *update) setStatus(w *world, nn types.NamespacedName, st gwv1.PolicyStatus) {
	if old, ok := w.out.Statuses[nn]; ok && reflect.DeepEqual(old, st) {
		return
	}
	if u.newStatuses == nil {
		u.newStatuses = map[types.NamespacedName]gwv1.PolicyStatus{}
	}
	u.newStatuses[nn] = st
}

// output patches the last Output into this one; e makes the Gateway
// fleets' own clusters.
func (w *world) output(u *update, generation uint64, e fleetclusters.Emitter) Output {
	prev := w.out
	out := prev
	out.Generation = generation
	changed := &ResourceChanges{Since: prev.Generation}
	out.Changed = changed

	clusters, producers, endpoints, secrets := w.current(u)
	out.Clusters, changed.Clusters = patchSorted(prev.Clusters, clusters, (*clusterv3.Cluster).GetName)
	out.Endpoints, changed.Endpoints = patchSorted(prev.Endpoints, endpoints, (*endpointv3.ClusterLoadAssignment).GetClusterName)
	out.Secrets, changed.Secrets = patchSorted(prev.Secrets, secrets, (*tlsv3.Secret).GetName)
	w.remakeOwnClusters(u, e, changed.Clusters)

	origins := copyOnWrite[string, []types.NamespacedName]{m: prev.Origins}
	namespaces := copyOnWrite[string, string]{m: prev.ClusterNamespaces}
	for name := range u.clusters {
		p := producers[name]
		if p == nil {
			origins.delete(name)
			namespaces.delete(name)
			continue
		}
		namespaces.set(name, p.namespace, func(a, b string) bool { return a == b })
		if p.policy == nil {
			origins.delete(name)
		} else {
			origins.set(name, []types.NamespacedName{p.policy.verdict.Name}, slices.Equal)
		}
	}
	notAfter := copyOnWrite[string, time.Time]{m: prev.CANotAfter}
	for name := range u.secrets {
		use := w.secrets[name]
		if use == nil {
			origins.delete(name)
			notAfter.delete(name)
			continue
		}
		origins.set(name, sortedPolicyNames(use.policies), slices.Equal)
		if use.notAfter.IsZero() {
			notAfter.delete(name)
		} else {
			notAfter.set(name, use.notAfter, time.Time.Equal)
		}
	}
	out.Origins, out.ClusterNamespaces, out.CANotAfter = origins.m, namespaces.m, notAfter.m

	statuses := copyOnWrite[types.NamespacedName, gwv1.PolicyStatus]{m: prev.Statuses}
	for nn := range u.statuses {
		if w.verdicts[nn] == nil {
			statuses.delete(nn)
		}
	}
	for nn, st := range u.newStatuses {
		statuses.set(nn, st, nil)
	}
	out.Statuses = statuses.m

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
	w.out = out
	return out
}

// remakeOwnClusters redoes the own clusters of the Gateway fleets this
// update rebuilt, or whose reached clusters changed; a fleet it changes is
// a changed fleet.
func (w *world) remakeOwnClusters(u *update, e fleetclusters.Emitter, changed []string) {
	if w.gateways.ownClusters == nil && !w.gateways.anyPresents() {
		return // the common case: no Gateway names a backend client certificate
	}
	since := func(fleet string) fleetChange {
		rebuilt := u.fleetsDirty && (u.changedFleets == nil || u.changedFleets[fleet])
		// Only a whole run of the Gateway rules (changedFleets nil) or a
		// route patch that moved some Gateway's reach changes what a
		// fleet's routes reach.
		return fleetChange{rebuilt: rebuilt, reach: u.reachChanged || u.fleetsDirty && u.changedFleets == nil}
	}
	if changed == nil {
		changed = []string{} // nil would say every cluster changed
	}
	old := w.gateways.ownClusterWarnings()
	fleets := w.gateways.makeOwnClusters(e, portLookup(w.producers), changed, since)
	if warnings := w.gateways.ownClusterWarnings(); !slices.Equal(old, warnings) {
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
		}
	}
	return clusters, producers, endpoints, secrets
}

// patchSorted returns old, sorted by name, with each named item replaced,
// added or (nil) removed, and the names whose item is not the same
// pointer as before. old is not modified; it is returned as is when
// nothing changed.
func patchSorted[T comparable](old []T, items map[string]T, name func(T) string) ([]T, []string) {
	var zero T
	cmp := func(item T, n string) int { return strings.Compare(name(item), n) }
	var changed []string
	for n, item := range items {
		i, found := slices.BinarySearchFunc(old, n, cmp)
		if (found && old[i] != item) || (!found && item != zero) {
			changed = append(changed, n)
		}
	}
	if len(changed) == 0 {
		return old, nil
	}
	slices.Sort(changed)
	if len(changed) > 64 {
		return mergeSorted(old, items, changed, name), changed
	}
	out := slices.Clone(old)
	for _, n := range changed {
		i, found := slices.BinarySearchFunc(out, n, cmp)
		switch item := items[n]; {
		case item == zero:
			out = slices.Delete(out, i, i+1)
		case found:
			out[i] = item
		default:
			out = slices.Insert(out, i, item)
		}
	}
	return out, changed
}

// mergeSorted is patchSorted's many-changes path: one pass over old.
func mergeSorted[T comparable](old []T, items map[string]T, changed []string, name func(T) string) []T {
	var zero T
	out := make([]T, 0, len(old)+len(changed))
	j := 0
	for _, item := range old {
		n := name(item)
		for j < len(changed) && changed[j] < n {
			if added := items[changed[j]]; added != zero {
				out = append(out, added)
			}
			j++
		}
		if j < len(changed) && changed[j] == n {
			if replaced := items[n]; replaced != zero {
				out = append(out, replaced)
			}
			j++
			continue
		}
		out = append(out, item)
	}
	for ; j < len(changed); j++ {
		if added := items[changed[j]]; added != zero {
			out = append(out, added)
		}
	}
	return out
}

// copyOnWrite changes a map handed out before through a copy, made at the
// first real change.
type copyOnWrite[K comparable, V any] struct {
	m      map[K]V
	copied bool
}

func (c *copyOnWrite[K, V]) write() {
	if !c.copied {
		c.m, c.copied = maps.Clone(c.m), true
		if c.m == nil {
			c.m = map[K]V{}
		}
	}
}

// set stores v unless equal (nil: never equal) says it is there already.
func (c *copyOnWrite[K, V]) set(k K, v V, equal func(a, b V) bool) {
	if old, ok := c.m[k]; ok && equal != nil && equal(old, v) {
		return
	}
	c.write()
	c.m[k] = v
}

func (c *copyOnWrite[K, V]) delete(k K) {
	if _, ok := c.m[k]; !ok {
		return
	}
	c.write()
	delete(c.m, k)
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
