package snapshots

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/smallset"
)

// patchable is the whole translation's snapshot (what a fleet without a
// namespace restriction is served, before a Gateway's own resources) with
// what lets the next publish patch it instead of building it again: the
// digest of every resource, each type's content sum, and which clusters
// read each load assignment and secret. A translation that names what
// changed since this one (translator.Output.Changed) then costs the
// publisher what changed.
//
// Its maps are the snapshot's and are changed in place, under the
// publisher's lock: everything else reads them under that lock too (the
// feeds copy what they serve).
type patchable struct {
	gen  uint64
	snap *servedSnapshot
	digs map[string]map[string]*digest // clusters, load assignments, secrets
	sums map[string]contentSum         // the same types, by content only
	// readers lists, per load assignment name, the clusters reading it
	// (edsName: every cluster, as versionsOf counts them); secretReaders,
	// per secret, the clusters naming it.
	readers       map[string]smallset.Set[string]
	secretReaders map[string]smallset.Set[string]
}

// patchTypes are the types a translation's Changed names.
var patchTypes = []string{resource.ClusterType, resource.EndpointType, resource.SecretType}

// newPatchable keeps a whole snapshot just built by newSnapshot.
func newPatchable(d *digests, gen uint64, snap *servedSnapshot) (*patchable, error) {
	pt := &patchable{
		gen: gen, snap: snap,
		digs: map[string]map[string]*digest{}, sums: map[string]contentSum{},
		readers: map[string]smallset.Set[string]{}, secretReaders: map[string]smallset.Set[string]{},
	}
	for _, typeURL := range patchTypes {
		items := snap.byType[typeURL]
		digs := make(map[string]*digest, len(items))
		var sum contentSum
		for name, r := range items {
			dg, err := d.of(r)
			if err != nil {
				return nil, err
			}
			digs[name] = dg
			sum.add(dg.element, 1)
		}
		pt.digs[typeURL], pt.sums[typeURL] = digs, sum
	}
	for name, r := range snap.byType[resource.ClusterType] {
		pt.read(r.(*clusterv3.Cluster), pt.digs[resource.ClusterType][name], 1)
	}
	return pt, nil
}

// read adds (1) or removes (-1) what cluster c reads.
func (pt *patchable) read(c *clusterv3.Cluster, dg *digest, sign int) {
	edit := func(m map[string]smallset.Set[string], key string) {
		if sign > 0 {
			smallset.Add(m, key, c.GetName())
		} else {
			smallset.Remove(m, key, c.GetName())
		}
	}
	edit(pt.readers, edsName(c))
	for _, s := range dg.secrets {
		edit(pt.secretReaders, s)
	}
}

// patchedName is one resource a patch sets: its new object (nil when
// removed) and digest, and the old ones.
type patchedName struct {
	name         string
	old, new     types.Resource
	oldDg, newDg *digest
}

// apply patches the snapshot with out's changes and returns it, with the
// names each type's feed must look at again. Everything is checked before
// anything changes: on error the snapshot is as it was. undo puts it back
// (for an error found later in the same publish).
func (pt *patchable) apply(d *digests, out translator.Output) (snap *servedSnapshot, touched map[string][]string, undo func(), err error) {
	v := patchView{pt: pt, changed: map[string]map[string]patchedName{}}
	for typeURL, names := range map[string][]string{
		resource.ClusterType:  out.Changed.Clusters,
		resource.EndpointType: out.Changed.Endpoints,
		resource.SecretType:   out.Changed.Secrets,
	} {
		v.changed[typeURL] = map[string]patchedName{}
		for _, name := range names {
			pn := patchedName{name: name, old: pt.snap.byType[typeURL][name], oldDg: pt.digs[typeURL][name]}
			if r := lookup(out, typeURL, name); r != nil {
				if pn.newDg, err = d.of(r); err != nil {
					return nil, nil, nil, err
				}
				pn.new = r
			}
			if pn.new != pn.old {
				v.changed[typeURL][name] = pn
			}
		}
	}
	if err := pt.check(v); err != nil {
		return nil, nil, nil, err
	}
	snap, touched, undo = pt.commit(d, out.Generation, v)
	return snap, touched, undo, nil
}

// lookup finds a resource by name in out's sorted lists.
func lookup(out translator.Output, typeURL, name string) types.Resource {
	switch typeURL {
	case resource.ClusterType:
		if i, ok := slices.BinarySearchFunc(out.Clusters, name, func(c *clusterv3.Cluster, n string) int { return strings.Compare(c.GetName(), n) }); ok {
			return out.Clusters[i]
		}
	case resource.EndpointType:
		if i, ok := slices.BinarySearchFunc(out.Endpoints, name, func(e *endpointv3.ClusterLoadAssignment, n string) int {
			return strings.Compare(e.GetClusterName(), n)
		}); ok {
			return out.Endpoints[i]
		}
	case resource.SecretType:
		if i, ok := slices.BinarySearchFunc(out.Secrets, name, func(s *tlsv3.Secret, n string) int { return strings.Compare(s.GetName(), n) }); ok {
			return out.Secrets[i]
		}
	}
	return nil
}

// patchView is the snapshot as a patch would leave it, read without
// changing it.
type patchView struct {
	pt      *patchable
	changed map[string]map[string]patchedName
}

func (v patchView) resource(typeURL, name string) types.Resource {
	if pn, ok := v.changed[typeURL][name]; ok {
		return pn.new
	}
	return v.pt.snap.byType[typeURL][name]
}

// readers is who reads key (a load assignment name, or a secret's) after
// the patch: the readers now, less the changed clusters' old reads, plus
// their new ones.
func (v patchView) readers(key string, secret bool) map[string]bool {
	now := v.pt.readers[key]
	if secret {
		now = v.pt.secretReaders[key]
	}
	out := make(map[string]bool, now.Len()+1)
	for name := range now.All() {
		out[name] = true
	}
	for _, pn := range v.changed[resource.ClusterType] {
		if pn.old != nil && reads(pn.old.(*clusterv3.Cluster), pn.oldDg, key, secret) {
			delete(out, pn.name)
		}
		if pn.new != nil && reads(pn.new.(*clusterv3.Cluster), pn.newDg, key, secret) {
			out[pn.name] = true
		}
	}
	return out
}

func reads(c *clusterv3.Cluster, dg *digest, key string, secret bool) bool {
	if secret {
		return slices.Contains(dg.secrets, key)
	}
	return edsName(c) == key
}

// touchedKeys are the load assignment and secret names whose presence or
// readers a patch changes: what its consistency check must look at.
func (v patchView) touchedKeys() (assignments, secrets map[string]bool) {
	assignments, secrets = map[string]bool{}, map[string]bool{}
	for _, pn := range v.changed[resource.ClusterType] {
		for _, side := range []struct {
			r  types.Resource
			dg *digest
		}{{pn.old, pn.oldDg}, {pn.new, pn.newDg}} {
			if side.r == nil {
				continue
			}
			assignments[edsName(side.r.(*clusterv3.Cluster))] = true
			for _, s := range side.dg.secrets {
				secrets[s] = true
			}
		}
	}
	for name := range v.changed[resource.EndpointType] {
		assignments[name] = true
	}
	for name := range v.changed[resource.SecretType] {
		secrets[name] = true
	}
	return assignments, secrets
}

// check is checkConsistent for what a patch touches: every changed
// cluster's load assignment and secrets are served, and every load
// assignment and secret whose readers changed is read exactly when served.
func (pt *patchable) check(v patchView) error {
	for _, name := range sortedNames(v.changed[resource.ClusterType]) {
		pn := v.changed[resource.ClusterType][name]
		if pn.new == nil {
			continue
		}
		c := pn.new.(*clusterv3.Cluster)
		if isEDS(c) && v.resource(resource.EndpointType, edsName(c)) == nil {
			return fmt.Errorf("cluster %s: reads load assignment %q, which is not in the snapshot", name, edsName(c))
		}
		for _, s := range pn.newDg.secrets {
			if v.resource(resource.SecretType, s) == nil {
				return fmt.Errorf("cluster %s: references secret %q, which is not in the snapshot", name, s)
			}
		}
	}
	assignments, secrets := v.touchedKeys()
	for _, name := range sortedNames(assignments) {
		eds := false
		for reader := range v.readers(name, false) {
			if c, ok := v.resource(resource.ClusterType, reader).(*clusterv3.Cluster); ok && isEDS(c) {
				eds = true
			}
		}
		served := v.resource(resource.EndpointType, name) != nil
		if served && !eds {
			return fmt.Errorf("load assignment %s: read by no EDS cluster", name)
		}
		if !served && eds {
			return fmt.Errorf("load assignment %s: read by an EDS cluster, and not in the snapshot", name)
		}
	}
	for _, name := range sortedNames(secrets) {
		read := len(v.readers(name, true)) > 0
		served := v.resource(resource.SecretType, name) != nil
		if served && !read {
			return fmt.Errorf("secret %s: referenced by no cluster and no listener (ADS would withhold the SDS reply)", name)
		}
		if !served && read {
			return fmt.Errorf("secret %s: referenced by a cluster, and not in the snapshot", name)
		}
	}
	return nil
}

// commit changes the snapshot; undo puts back what it changed.
func (pt *patchable) commit(d *digests, gen uint64, v patchView) (*servedSnapshot, map[string][]string, func()) {
	var undos []func()
	oldSnap, oldGen, oldSums := pt.snap, pt.gen, maps.Clone(pt.sums)
	touched := map[string][]string{}
	// Readers first, from every changed cluster's old and new reads.
	for _, pn := range v.changed[resource.ClusterType] {
		if pn.old != nil {
			pt.read(pn.old.(*clusterv3.Cluster), pn.oldDg, -1)
		}
		if pn.new != nil {
			pt.read(pn.new.(*clusterv3.Cluster), pn.newDg, 1)
		}
	}
	undos = append(undos, func() {
		for _, pn := range v.changed[resource.ClusterType] {
			if pn.new != nil {
				pt.read(pn.new.(*clusterv3.Cluster), pn.newDg, -1)
			}
			if pn.old != nil {
				pt.read(pn.old.(*clusterv3.Cluster), pn.oldDg, 1)
			}
		}
	})
	for _, typeURL := range patchTypes {
		items, digs, wires := pt.snap.byType[typeURL], pt.digs[typeURL], pt.snap.VersionMap[typeURL]
		sum := pt.sums[typeURL]
		for name, pn := range v.changed[typeURL] {
			undos = append(undos, restoreKey(items, name), restoreKey(digs, name), restoreKey(wires, name))
			if pn.oldDg != nil {
				sum.add(pn.oldDg.element, -1)
				d.forget(pn.old)
			}
			if pn.new == nil {
				delete(items, name)
				delete(digs, name)
				delete(wires, name)
			} else {
				items[name], digs[name] = pn.new, pn.newDg
				wires[name] = pn.newDg.wire // load assignments: re-versioned below
				sum.add(pn.newDg.element, 1)
			}
			if typeURL != resource.EndpointType {
				touched[typeURL] = append(touched[typeURL], name)
			}
		}
		pt.sums[typeURL] = sum
	}
	// A load assignment's version covers the clusters reading it.
	assignments, _ := v.touchedKeys()
	wires := pt.snap.VersionMap[resource.EndpointType]
	for name := range assignments {
		undos = append(undos, restoreKey(wires, name))
		dg := pt.digs[resource.EndpointType][name]
		if dg == nil {
			delete(wires, name)
		} else {
			wires[name] = hashOf(append([]string{dg.wire}, pt.readerWires(name)...)...)
		}
		touched[resource.EndpointType] = append(touched[resource.EndpointType], name)
	}
	snap := &servedSnapshot{
		versions: typeVersions(pt.sums[resource.ClusterType].version(),
			pt.sums[resource.EndpointType].version(), pt.sums[resource.SecretType].version()),
		byType: pt.snap.byType, VersionMap: pt.snap.VersionMap,
	}
	pt.snap, pt.gen = snap, gen
	undo := func() {
		for i := len(undos) - 1; i >= 0; i-- {
			undos[i]()
		}
		pt.snap, pt.gen, pt.sums = oldSnap, oldGen, oldSums
	}
	return snap, touched, undo
}

// readerWires are the content hashes of the clusters reading a load
// assignment, in cluster name order (versionsOf's readers).
func (pt *patchable) readerWires(assignment string) []string {
	names := slices.Sorted(pt.readers[assignment].All())
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, pt.digs[resource.ClusterType][n].wire)
	}
	return out
}

// restoreKey returns what puts m[k] back as it is now.
func restoreKey[V any](m map[string]V, k string) func() {
	old, ok := m[k]
	return func() {
		if ok {
			m[k] = old
		} else {
			delete(m, k)
		}
	}
}
