package snapshots

import (
	"slices"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// patch brings s, made from the whole snapshot before the publish, up to
// whole, which the publish patched (pt, committed) changing touched. It
// looks at the touched names alone, and at the clusters reading a secret
// that became or stopped being a key (keyless). s.changed then names what
// changed in s.
func (s *scope) patch(pt *patchable, whole *servedSnapshot, touched map[string][]string) {
	sums := map[string]contentSum{}
	for t, sum := range s.sums {
		sums[t] = sum
	}
	s.sums = sums
	changed := map[string][]string{}
	set := func(typeURL, name string, dg *digest, version string) {
		items, wires, digs := s.snap.byType[typeURL], s.snap.VersionMap[typeURL], s.digs[typeURL]
		sum := s.sums[typeURL]
		if old := digs[name]; old != nil {
			sum.add(old.element, -1)
		}
		if dg == nil {
			delete(items, name)
			delete(wires, name)
			delete(digs, name)
		} else {
			items[name], wires[name], digs[name] = s.whole.byType[typeURL][name], version, dg
			sum.add(dg.element, 1)
		}
		s.sums[typeURL] = sum
		changed[typeURL] = append(changed[typeURL], name)
	}
	s.whole = whole

	candidates := slices.Clone(touched[resource.ClusterType])
	if s.keys != nil {
		for _, name := range touched[resource.SecretType] {
			r, ok := whole.byType[resource.SecretType][name]
			if key := ok && holdsKey(r); key != s.keys[name] {
				if key {
					s.keys[name] = true
				} else {
					delete(s.keys, name)
				}
				for reader := range pt.secretReaders[name].All() {
					candidates = append(candidates, reader)
				}
			}
		}
	}
	assignments, secrets := map[string]bool{}, map[string]bool{}
	for _, name := range touched[resource.EndpointType] {
		assignments[name] = true
	}
	for _, name := range touched[resource.SecretType] {
		secrets[name] = true
	}
	for _, name := range candidates {
		if s.reached != nil && !s.reached[name] {
			continue // a Gateway fleet's reach changes its scope whole
		}
		newDg := pt.digs[resource.ClusterType][name]
		oldDg := s.digs[resource.ClusterType][name]
		newIn := newDg != nil && s.keep(name, newDg)
		if s.withheld != nil {
			if newDg != nil && !newIn {
				s.withheld[name] = true
			} else {
				delete(s.withheld, name)
			}
		}
		if (oldDg == nil && !newIn) || (newIn && oldDg == newDg) {
			continue
		}
		if oldDg != nil {
			s.reads(s.snap.byType[resource.ClusterType][name].(*clusterv3.Cluster), oldDg, assignments, secrets)
		}
		if newIn {
			s.reads(whole.byType[resource.ClusterType][name].(*clusterv3.Cluster), newDg, assignments, secrets)
			set(resource.ClusterType, name, newDg, newDg.wire)
		} else {
			set(resource.ClusterType, name, nil, "")
		}
	}
	for _, name := range sortedNames(assignments) {
		dg := pt.digs[resource.EndpointType][name]
		var readers []string // kept clusters reading it, by name
		eds := false
		for reader := range pt.readers[name].All() {
			if s.digs[resource.ClusterType][reader] != nil {
				readers = append(readers, reader)
				eds = eds || isEDS(s.snap.byType[resource.ClusterType][reader].(*clusterv3.Cluster))
			}
		}
		if dg == nil || !eds {
			if s.digs[resource.EndpointType][name] != nil {
				set(resource.EndpointType, name, nil, "")
			}
			continue
		}
		slices.Sort(readers)
		chunks := []string{dg.wire}
		for _, reader := range readers {
			chunks = append(chunks, s.digs[resource.ClusterType][reader].wire)
		}
		version := hashOf(chunks...)
		if s.digs[resource.EndpointType][name] != dg || s.snap.VersionMap[resource.EndpointType][name] != version {
			set(resource.EndpointType, name, dg, version)
		}
	}
	for _, name := range sortedNames(secrets) {
		dg := pt.digs[resource.SecretType][name]
		read := false
		if dg != nil {
			for reader := range pt.secretReaders[name].All() {
				if s.digs[resource.ClusterType][reader] != nil {
					read = true
					break
				}
			}
		}
		switch {
		case read && s.digs[resource.SecretType][name] != dg:
			set(resource.SecretType, name, dg, dg.wire)
		case !read && s.digs[resource.SecretType][name] != nil:
			set(resource.SecretType, name, nil, "")
		}
	}
	s.snap = &servedSnapshot{
		versions: typeVersions(s.sums[resource.ClusterType].version(),
			s.sums[resource.EndpointType].version(), s.sums[resource.SecretType].version()),
		byType: s.snap.byType, VersionMap: s.snap.VersionMap,
	}
	s.changed = changed
}

// reads notes the load assignment and secrets cluster c reads.
func (s *scope) reads(c *clusterv3.Cluster, dg *digest, assignments, secrets map[string]bool) {
	assignments[edsName(c)] = true
	for _, name := range dg.secrets {
		secrets[name] = true
	}
}
