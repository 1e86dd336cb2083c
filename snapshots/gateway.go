package snapshots

import (
	"maps"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlsplane/tlsplane/translator"
)

// A Gateway fleet (a fleet for which translator.Output.Fleets has an entry)
// is served its base snapshot (by default the clusters its routes reach,
// with their endpoints and secrets: its scope; under ScopeAll what any
// fleet gets) plus its own listeners, route configurations and listener
// certificates. Its own secrets hold private keys, so they exist only in
// this fleet's snapshot and feed.
//
// The base's per-type maps and versions are shared, not copied: a Gateway
// fleet costs what it owns, not the clusters its base holds. Only SDS
// mixes both, so its maps are merged, and only when its version changes.

// fleetPart is a Gateway fleet's own resources, digested and checked.
// ownClusters are its own versions of base clusters, those base serves (a
// fleet restricted to namespaces is never served another's cluster), and
// ownSecrets its secrets but those only the left-out clusters read.
type fleetPart struct {
	listeners, routes, secrets, clusters []*digest
	ownClusters                          []*clusterv3.Cluster
	ownSecrets                           []*tlsv3.Secret
	// clusterReads are the secrets ownClusters read.
	clusterReads map[string]bool
	// cc is the clusters' check, kept for the next publish.
	cc *clusterCheck
}

// clusterCheck is a fleet's own clusters (src, translator's slice) checked
// against a base CDS version: reused while both are the same, as a route
// or endpoint change leaves them (the translator keeps the slice).
type clusterCheck struct {
	src            []*clusterv3.Cluster
	baseCDS        string
	kept           []*clusterv3.Cluster
	digests        []*digest
	reads, leftOut map[string]bool
}

// checkFleet digests a Gateway fleet's own resources and checks them
// against base; it builds nothing, so even a fleet with no stream open is
// checked at every publish for the cost of what it owns. prev (may be
// nil) lends its clusters' check.
func checkFleet(d *digests, base *servedSnapshot, own *translator.FleetResources, prev *clusterCheck) (fleetPart, error) {
	var part fleetPart
	var err error
	if part.listeners, err = encode(d, asResources(own.Listeners)); err != nil {
		return fleetPart{}, err
	}
	if part.routes, err = encode(d, asResources(own.Routes)); err != nil {
		return fleetPart{}, err
	}
	part.ownSecrets = own.Secrets
	if len(own.Clusters) > 0 {
		cc := prev
		if cc == nil || !sameSlice(cc.src, own.Clusters) || cc.baseCDS != base.GetVersion(resource.ClusterType) {
			if cc, err = checkClusters(d, base, own.Clusters); err != nil {
				return fleetPart{}, err
			}
		}
		part.cc, part.ownClusters, part.clusters, part.clusterReads = cc, cc.kept, cc.digests, cc.reads
		if len(cc.leftOut) > 0 {
			part.ownSecrets = withoutLeftOut(part, own.Secrets, cc.leftOut)
		}
	}
	if part.secrets, err = encode(d, asResources(part.ownSecrets)); err != nil {
		return fleetPart{}, err
	}
	if err := checkListeners(part, base.GetResources(resource.SecretType)); err != nil {
		return fleetPart{}, err
	}
	return part, nil
}

// sameSlice: a and b are the very same slice.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// checkClusters keeps the own clusters base serves, with the secrets they
// read and those only the others (left out) read.
func checkClusters(d *digests, base *servedSnapshot, own []*clusterv3.Cluster) (*clusterCheck, error) {
	baseClusters := base.GetResources(resource.ClusterType)
	cc := &clusterCheck{src: own, baseCDS: base.GetVersion(resource.ClusterType), reads: map[string]bool{}, leftOut: map[string]bool{}}
	for _, c := range own {
		dg, err := d.of(c)
		if err != nil {
			return nil, err
		}
		_, served := baseClusters[c.GetName()]
		if served {
			cc.kept, cc.digests = append(cc.kept, c), append(cc.digests, dg)
		}
		for _, name := range dg.secrets {
			if served {
				cc.reads[name] = true
			} else {
				cc.leftOut[name] = true
			}
		}
	}
	return cc, nil
}

// withoutLeftOut is secrets without those only left-out clusters read: a
// fleet restricted to namespaces gets neither a cluster of another
// namespace nor the key that cluster would have presented.
func withoutLeftOut(part fleetPart, secrets []*tlsv3.Secret, leftOut map[string]bool) []*tlsv3.Secret {
	listenerReads := map[string]bool{}
	for _, l := range part.listeners {
		for _, name := range l.listener.secrets {
			listenerReads[name] = true
		}
	}
	out := make([]*tlsv3.Secret, 0, len(secrets))
	for _, s := range secrets {
		if name := s.GetName(); part.clusterReads[name] || listenerReads[name] || !leftOut[name] {
			out = append(out, s)
		}
	}
	return out
}

// fleetCheck is a Gateway fleet's own resources as checked against a
// base, with their type versions: kept in the fleet's snapshot, so a
// publish that changes neither (an endpoint moved) checks nothing again.
type fleetCheck struct {
	own                *translator.FleetResources
	baseCDS, baseSDS   string
	part               fleetPart
	lds, rds, clusters string // clusters: "" when it has none
	secrets            string // "" when it has none
	edsReaders         map[string]string
}

// checked is own checked against base, from prev's when it is the same.
func checked(d *digests, base *servedSnapshot, own *translator.FleetResources, prev *servedSnapshot) (*fleetCheck, error) {
	cds, sds := base.GetVersion(resource.ClusterType), base.GetVersion(resource.SecretType)
	if prev != nil && prev.fleet != nil && prev.fleet.own == own && prev.fleet.baseCDS == cds && prev.fleet.baseSDS == sds {
		return prev.fleet, nil
	}
	var prevClusters *clusterCheck
	if prev != nil && prev.fleet != nil {
		prevClusters = prev.fleet.part.cc
	}
	part, err := checkFleet(d, base, own, prevClusters)
	if err != nil {
		return nil, err
	}
	c := &fleetCheck{own: own, baseCDS: cds, baseSDS: sds, part: part,
		lds: typeVersion(part.listeners), rds: typeVersion(part.routes)}
	if len(part.clusters) > 0 {
		if prevClusters != nil && part.cc == prevClusters {
			c.clusters = prev.fleet.clusters
		} else {
			c.clusters = typeVersion(part.clusters)
		}
	}
	if len(part.secrets) > 0 {
		c.secrets = typeVersion(part.secrets)
	}
	return c, nil
}

// gatewaySnapshot is base plus a Gateway fleet's own resources. prev, the
// fleet's snapshot being served (or nil), is returned as it is when
// nothing changed, and lends its maps of each type that did not change.
//
// touched (may be nil: unknown) names per type what changed in base since
// prev was built from it: an endpoint change then costs the fleet a copy
// of prev's version map and the names that changed.
func gatewaySnapshot(d *digests, base *servedSnapshot, own *translator.FleetResources, prev *servedSnapshot, touched map[string][]string) (*servedSnapshot, error) {
	fc, err := checked(d, base, own, prev)
	if err != nil {
		return nil, err
	}
	part, lds, rds := fc.part, fc.lds, fc.rds
	sds := base.GetVersion(resource.SecretType)
	if fc.secrets != "" {
		sds = hashOf(sds, fc.secrets)
	}
	cds, eds := base.GetVersion(resource.ClusterType), base.GetVersion(resource.EndpointType)
	if fc.clusters != "" {
		// A load assignment's version follows the clusters reading it
		// (version.go), here the fleet's own.
		cds, eds = hashOf(cds, fc.clusters), hashOf(eds, fc.clusters)
	}
	want := map[string]string{
		resource.ClusterType:  cds,
		resource.EndpointType: eds,
		resource.ListenerType: lds,
		resource.RouteType:    rds,
		resource.SecretType:   sds,
	}
	if prev != nil && hasVersions(prev, want) {
		return prev, nil
	}

	snap := newServedSnapshot()
	snap.fleet = fc
	switch {
	case prev != nil && prev.GetVersion(resource.ClusterType) == cds:
		snap.share(prev, resource.ClusterType)
	case fc.clusters == "":
		snap.share(base, resource.ClusterType)
	default:
		snap.mergeClusters(base, part, cds)
	}
	switch {
	case prev != nil && prev.GetVersion(resource.EndpointType) == eds:
		snap.share(prev, resource.EndpointType)
	case fc.clusters == "":
		snap.share(base, resource.EndpointType)
	case touched != nil && prev != nil && prev.fleet == fc:
		snap.patchEndpointVersions(base, prev, fc, touched[resource.EndpointType], eds)
	default:
		snap.mergeEndpointVersions(base, part, eds)
	}
	snap.setType(resource.ListenerType, lds, asResources(own.Listeners))
	snap.VersionMap[resource.ListenerType] = wireVersions(part.listeners)
	snap.setType(resource.RouteType, rds, asResources(own.Routes))
	snap.VersionMap[resource.RouteType] = wireVersions(part.routes)
	snap.routeWires = make(map[string]*routeWire, len(part.routes))
	for _, dg := range part.routes {
		snap.routeWires[dg.name] = dg.route
	}
	switch {
	case prev != nil && prev.GetVersion(resource.SecretType) == sds:
		snap.share(prev, resource.SecretType)
	case len(part.secrets) == 0:
		snap.share(base, resource.SecretType)
	default:
		snap.mergeSecrets(base, part, sds)
	}
	return snap, nil
}

// share serves from's typeURL resources, maps and versions as they are.
func (s *servedSnapshot) share(from *servedSnapshot, typeURL string) {
	s.versions[typeURL] = from.versions[typeURL]
	s.byType[typeURL] = from.byType[typeURL]
	s.VersionMap[typeURL] = from.VersionMap[typeURL]
}

// mergeClusters serves base's clusters with the fleet's own versions in
// their place, at version cds. It copies base's maps: a Gateway with a
// backend client certificate costs its fleet that copy when clusters
// change.
func (s *servedSnapshot) mergeClusters(base *servedSnapshot, part fleetPart, cds string) {
	named := maps.Clone(base.byType[resource.ClusterType])
	versions := maps.Clone(base.VersionMap[resource.ClusterType])
	for i, c := range part.ownClusters {
		named[c.GetName()] = c
		versions[c.GetName()] = part.clusters[i].wire
	}
	s.versions[resource.ClusterType] = cds
	s.byType[resource.ClusterType] = named
	s.VersionMap[resource.ClusterType] = versions
}

// mergeEndpointVersions serves base's load assignments, those the fleet's
// own clusters read versioned with them, at version eds: a copy of base's
// version map when endpoints change.
func (s *servedSnapshot) mergeEndpointVersions(base *servedSnapshot, part fleetPart, eds string) {
	versions := maps.Clone(base.VersionMap[resource.EndpointType])
	for i, c := range part.ownClusters {
		if v, ok := versions[edsName(c)]; ok && isEDS(c) {
			versions[edsName(c)] = hashOf(v, part.clusters[i].wire)
		}
	}
	s.versions[resource.EndpointType] = eds
	s.byType[resource.EndpointType] = base.byType[resource.EndpointType]
	s.VersionMap[resource.EndpointType] = versions
}

// patchEndpointVersions is mergeEndpointVersions from prev's (built with
// the same own clusters fc from base before names changed in it).
func (s *servedSnapshot) patchEndpointVersions(base, prev *servedSnapshot, fc *fleetCheck, names []string, eds string) {
	versions := maps.Clone(prev.VersionMap[resource.EndpointType])
	baseVersions := base.VersionMap[resource.EndpointType]
	for _, name := range names {
		v, ok := baseVersions[name]
		switch {
		case !ok:
			delete(versions, name)
		case fc.readers()[name] != "":
			versions[name] = hashOf(v, fc.readers()[name])
		default:
			versions[name] = v
		}
	}
	s.versions[resource.EndpointType] = eds
	s.byType[resource.EndpointType] = base.byType[resource.EndpointType]
	s.VersionMap[resource.EndpointType] = versions
}

// readers maps each load assignment an own EDS cluster reads to that
// cluster's wire version, made once per check.
func (fc *fleetCheck) readers() map[string]string {
	if fc.edsReaders == nil {
		fc.edsReaders = make(map[string]string, len(fc.part.ownClusters))
		for i, c := range fc.part.ownClusters {
			if isEDS(c) {
				fc.edsReaders[edsName(c)] = fc.part.clusters[i].wire
			}
		}
	}
	return fc.edsReaders
}

// mergeSecrets serves base's secrets and the fleet's own, at version.
// checkListeners made sure no name is in both.
func (s *servedSnapshot) mergeSecrets(base *servedSnapshot, part fleetPart, version string) {
	named := maps.Clone(base.byType[resource.SecretType])
	versions := maps.Clone(base.VersionMap[resource.SecretType])
	if named == nil {
		named, versions = map[string]types.Resource{}, map[string]string{}
	}
	for i, secret := range part.ownSecrets {
		name := secret.GetName()
		named[name] = secret
		versions[name] = part.secretWire(i)
	}
	s.versions[resource.SecretType] = version
	s.byType[resource.SecretType] = named
	s.VersionMap[resource.SecretType] = versions
}

// secretWire is the wire version of ownSecrets[i]; part.secrets is the
// same resources sorted by name, as ownSecrets is (the translator's
// contract), but a lookup by name does not rely on it.
func (p fleetPart) secretWire(i int) string {
	name := p.ownSecrets[i].GetName()
	if i < len(p.secrets) && p.secrets[i].name == name {
		return p.secrets[i].wire
	}
	for _, dg := range p.secrets {
		if dg.name == name {
			return dg.wire
		}
	}
	return ""
}

// hasVersions: s serves exactly these type versions.
func hasVersions(s *servedSnapshot, want map[string]string) bool {
	for typeURL, v := range want {
		if s.GetVersion(typeURL) != v {
			return false
		}
	}
	return true
}
