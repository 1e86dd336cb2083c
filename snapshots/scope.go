package snapshots

import (
	"fmt"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// FleetScope is what a fleet that --fleet-namespaces does not list is
// served of the whole translation's clusters.
type FleetScope string

const (
	// ScopeReached (the default): a Gateway fleet is served the clusters
	// its own routes reach (translator.FleetResources.Reached), with
	// exactly the load assignments and secrets they read; a fleet without
	// a Gateway is served every cluster but those reading a private key
	// (a BackendTLSPolicy's client certificate), which it is never served.
	ScopeReached FleetScope = "reached"
	// ScopeAll: every such fleet is served every cluster, load assignment
	// and secret, private keys included (tlsplane before issue 33).
	ScopeAll FleetScope = "all"
)

// ParseFleetScope reads "reached" or "all"; "" is ScopeReached.
func ParseFleetScope(v string) (FleetScope, error) {
	switch FleetScope(v) {
	case "", ScopeReached:
		return ScopeReached, nil
	case ScopeAll:
		return ScopeAll, nil
	}
	return "", fmt.Errorf("fleet scope %q: want %s or %s", v, ScopeReached, ScopeAll)
}

// A scope is the part of the whole translation's snapshot one kind of
// fleet keeps: the clusters keep admits, the load assignments the kept EDS
// clusters read, versioned with the kept clusters reading them, and the
// secrets the kept clusters read. It is built from the whole once, then
// patched with what each publish changed (scope_patch.go): an edit
// elsewhere costs a fleet a look at the names that changed, never a walk
// over its clusters. Its maps are changed in place under the publisher's
// lock, as the whole's are.
type scope struct {
	snap *servedSnapshot
	// whole is the whole translation's snapshot snap was made from.
	whole *servedSnapshot
	// changed names, per type, what the last patch changed in snap; nil
	// when snap was built whole.
	changed map[string][]string
	digs    map[string]map[string]*digest // clusters, load assignments, secrets kept
	sums    map[string]contentSum

	// reached (a Gateway fleet's scope) are the clusters kept, from the
	// fleet's Reached slice src.
	reached map[string]bool
	src     []string
	// keys (a keyless scope's) are the whole's secrets holding a private
	// key; withheld the clusters left out for reading one.
	keys     map[string]bool
	withheld map[string]bool
	// grant (a granted scope's: a fleet --fleet-namespaces lists) are the
	// namespaces whose clusters are kept, by clusterNamespaces, the last
	// translation's map of each cluster to its namespace.
	grant             map[string]bool
	clusterNamespaces map[string]string
}

// scopedTypes are the types a scope filters; listeners and routes are a
// Gateway fleet's own.
var scopedTypes = []string{resource.ClusterType, resource.EndpointType, resource.SecretType}

// holdsKey: a secret that is not only trust material (a CA bundle, a CRL)
// holds a private key, or something as secret.
func holdsKey(r types.Resource) bool {
	s, ok := r.(*tlsv3.Secret)
	return ok && s.GetValidationContext() == nil
}

// keep: the scope serves the cluster name, whose digest is dg.
func (s *scope) keep(name string, dg *digest) bool {
	if s.grant != nil {
		// The translator says whose cluster it is: a name is not parsed
		// for it, so no name can pass for another namespace's.
		if ns, known := s.clusterNamespaces[name]; !known || !s.grant[ns] {
			return false
		}
		return s.reached == nil || s.reached[name]
	}
	if s.keys == nil {
		return s.reached[name]
	}
	for _, secret := range dg.secrets {
		if s.keys[secret] {
			return false
		}
	}
	return true
}

// reachedScope keeps the clusters named in reached (sorted): a Gateway
// fleet's.
func reachedScope(d *digests, whole *servedSnapshot, reached []string) (*scope, error) {
	s := &scope{reached: make(map[string]bool, len(reached)), src: reached}
	for _, name := range reached {
		s.reached[name] = true
	}
	return s, s.build(d, whole, reached)
}

// keylessScope keeps every cluster that reads no private key: a fleet's
// without a Gateway, and without a grant of namespaces.
func keylessScope(d *digests, whole *servedSnapshot) (*scope, error) {
	s := &scope{keys: map[string]bool{}, withheld: map[string]bool{}}
	for name, r := range whole.byType[resource.SecretType] {
		if holdsKey(r) {
			s.keys[name] = true
		}
	}
	return s, s.build(d, whole, sortedNames(whole.byType[resource.ClusterType]))
}

// grantedScope keeps the clusters of the namespaces granted (of those,
// when reached is not nil, the ones it names: a Gateway fleet's reach): a
// fleet --fleet-namespaces lists, which is granted the keys its clusters
// read. Patched like the others, an edit costs such a fleet a look at the
// names that changed; it was a filter of every cluster, load assignment
// and secret on each publish (80 ms at 100,000 Services).
func grantedScope(d *digests, whole *servedSnapshot, granted []string, clusterNamespaces map[string]string, reached []string) (*scope, error) {
	s := &scope{grant: make(map[string]bool, len(granted)), clusterNamespaces: clusterNamespaces, src: reached}
	for _, ns := range granted {
		s.grant[ns] = true
	}
	candidates := reached
	if reached != nil {
		s.reached = make(map[string]bool, len(reached))
		for _, name := range reached {
			s.reached[name] = true
		}
	} else {
		candidates = sortedNames(whole.byType[resource.ClusterType])
	}
	return s, s.build(d, whole, candidates)
}

// build makes snap from whole's clusters named candidates (sorted), as a
// fresh fleet snapshot is made: checked for consistency.
func (s *scope) build(d *digests, whole *servedSnapshot, candidates []string) error {
	s.whole, s.changed = whole, nil
	s.digs, s.sums = map[string]map[string]*digest{}, map[string]contentSum{}
	all := whole.byType[resource.ClusterType]
	var res fleetResources
	assignments, secrets := map[string]bool{}, map[string]bool{}
	for _, name := range candidates {
		r, ok := all[name]
		if !ok {
			continue // a Service port with no cluster (yet)
		}
		dg, err := d.of(r)
		if err != nil {
			return err
		}
		if !s.keep(name, dg) {
			if s.withheld != nil {
				s.withheld[name] = true
			}
			continue
		}
		c := r.(*clusterv3.Cluster)
		res.clusters = append(res.clusters, c)
		if isEDS(c) {
			assignments[edsName(c)] = true
		}
		for _, secret := range dg.secrets {
			secrets[secret] = true
		}
	}
	for _, name := range sortedNames(assignments) {
		if r, ok := whole.byType[resource.EndpointType][name]; ok {
			res.endpoints = append(res.endpoints, r.(*endpointv3.ClusterLoadAssignment))
		}
	}
	for _, name := range sortedNames(secrets) {
		if r, ok := whole.byType[resource.SecretType][name]; ok {
			res.secrets = append(res.secrets, r.(*tlsv3.Secret))
		}
	}
	snap, err := newSnapshot(d, res)
	if err != nil {
		return err
	}
	s.snap = snap
	for _, typeURL := range scopedTypes {
		digs := make(map[string]*digest, len(snap.byType[typeURL]))
		var sum contentSum
		for name, r := range snap.byType[typeURL] {
			dg, err := d.of(r)
			if err != nil {
				return err
			}
			digs[name] = dg
			sum.add(dg.element, 1)
		}
		s.digs[typeURL], s.sums[typeURL] = digs, sum
	}
	return nil
}
