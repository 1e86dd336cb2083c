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
// is served its base snapshot (what any fleet of its name would get:
// clusters, endpoints and CA secrets) plus its own listeners, route
// configurations and listener certificates. Its own secrets hold private
// keys, so they exist only in this fleet's snapshot and feed.
//
// The base's per-type maps and versions are shared, not copied: a Gateway
// fleet costs what it owns, not the 10,000 clusters every fleet is served.
// Only SDS mixes both, so its maps are merged, and only when its version
// changes.

// fleetPart is a Gateway fleet's own resources, digested and checked.
// ownClusters are its own versions of base clusters, those base serves (a
// fleet restricted to namespaces is never served another's cluster), and
// ownSecrets its secrets but those only the left-out clusters read.
type fleetPart struct {
	listeners, routes, secrets, clusters []*digest
	ownClusters                          []*clusterv3.Cluster
	ownSecrets                           []*tlsv3.Secret
}

// checkFleet digests a Gateway fleet's own resources and checks them
// against base; it builds nothing, so even a fleet with no stream open is
// checked at every publish for the cost of what it owns.
func checkFleet(d *digests, base *servedSnapshot, own *translator.FleetResources) (fleetPart, error) {
	var part fleetPart
	var err error
	if part.listeners, err = encode(d, asResources(own.Listeners)); err != nil {
		return fleetPart{}, err
	}
	if part.routes, err = encode(d, asResources(own.Routes)); err != nil {
		return fleetPart{}, err
	}
	part.ownClusters, part.ownSecrets = own.Clusters, own.Secrets
	if len(own.Clusters) > 0 {
		if part.ownClusters, part.ownSecrets, err = servedOwnClusters(d, base, own); err != nil {
			return fleetPart{}, err
		}
	}
	if part.secrets, err = encode(d, asResources(part.ownSecrets)); err != nil {
		return fleetPart{}, err
	}
	if part.clusters, err = encode(d, asResources(part.ownClusters)); err != nil {
		return fleetPart{}, err
	}
	if err := checkListeners(part, base.GetResources(resource.SecretType)); err != nil {
		return fleetPart{}, err
	}
	return part, nil
}

// servedOwnClusters are the fleet's own clusters base serves, and its
// secrets without those that only the others read: a fleet restricted to
// namespaces gets neither a cluster of another namespace nor the key
// that cluster would have presented.
func servedOwnClusters(d *digests, base *servedSnapshot, own *translator.FleetResources) ([]*clusterv3.Cluster, []*tlsv3.Secret, error) {
	baseClusters := base.GetResources(resource.ClusterType)
	var kept []*clusterv3.Cluster
	read, leftOut := map[string]bool{}, map[string]bool{}
	for _, c := range own.Clusters {
		dg, err := d.of(c)
		if err != nil {
			return nil, nil, err
		}
		_, served := baseClusters[c.GetName()]
		if served {
			kept = append(kept, c)
		}
		for _, name := range dg.secrets {
			if served {
				read[name] = true
			} else {
				leftOut[name] = true
			}
		}
	}
	if len(leftOut) == 0 {
		return kept, own.Secrets, nil
	}
	for _, l := range own.Listeners {
		dg, err := d.of(l)
		if err != nil {
			return nil, nil, err
		}
		for _, name := range dg.listener.secrets {
			read[name] = true
		}
	}
	secrets := make([]*tlsv3.Secret, 0, len(own.Secrets))
	for _, s := range own.Secrets {
		if read[s.GetName()] || !leftOut[s.GetName()] {
			secrets = append(secrets, s)
		}
	}
	return kept, secrets, nil
}

// gatewaySnapshot is base plus a Gateway fleet's own resources. prev, the
// fleet's snapshot being served (or nil), is returned as it is when
// nothing changed, and lends its merged SDS maps when SDS did not change.
func gatewaySnapshot(d *digests, base *servedSnapshot, own *translator.FleetResources, prev *servedSnapshot) (*servedSnapshot, error) {
	part, err := checkFleet(d, base, own)
	if err != nil {
		return nil, err
	}
	lds, rds := typeVersion(part.listeners), typeVersion(part.routes)
	sds := base.GetVersion(resource.SecretType)
	if len(part.secrets) > 0 {
		sds = hashOf(sds, typeVersion(part.secrets))
	}
	cds, eds := base.GetVersion(resource.ClusterType), base.GetVersion(resource.EndpointType)
	if len(part.clusters) > 0 {
		// A load assignment's version follows the clusters reading it
		// (version.go), here the fleet's own.
		own := typeVersion(part.clusters)
		cds, eds = hashOf(cds, own), hashOf(eds, own)
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
	switch {
	case prev != nil && prev.GetVersion(resource.ClusterType) == cds && prev.GetVersion(resource.EndpointType) == eds:
		snap.share(prev, resource.ClusterType)
		snap.share(prev, resource.EndpointType)
	case len(part.clusters) == 0:
		snap.share(base, resource.ClusterType)
		snap.share(base, resource.EndpointType)
	default:
		snap.mergeClusters(base, part, cds, eds)
	}
	snap.setType(resource.ListenerType, lds, asResources(own.Listeners))
	snap.VersionMap[resource.ListenerType] = wireVersions(part.listeners)
	snap.setType(resource.RouteType, rds, asResources(own.Routes))
	snap.VersionMap[resource.RouteType] = wireVersions(part.routes)
	snap.routeBytes = make(map[string][]byte, len(part.routes))
	for _, dg := range part.routes {
		snap.routeBytes[dg.name] = dg.encoded
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
// their place, at version cds, and base's load assignments, those the own
// clusters read versioned with them, at eds. It copies base's maps: a
// Gateway with a backend client certificate costs its fleet that copy
// when clusters or endpoints change.
func (s *servedSnapshot) mergeClusters(base *servedSnapshot, part fleetPart, cds, eds string) {
	named := maps.Clone(base.byType[resource.ClusterType])
	versions := maps.Clone(base.VersionMap[resource.ClusterType])
	endpoints := maps.Clone(base.VersionMap[resource.EndpointType])
	for i, c := range part.ownClusters {
		named[c.GetName()] = c
		versions[c.GetName()] = part.clusters[i].wire
		if v, ok := endpoints[edsName(c)]; ok && isEDS(c) {
			endpoints[edsName(c)] = hashOf(v, part.clusters[i].wire)
		}
	}
	s.versions[resource.ClusterType] = cds
	s.byType[resource.ClusterType] = named
	s.VersionMap[resource.ClusterType] = versions
	s.versions[resource.EndpointType] = eds
	s.byType[resource.EndpointType] = base.byType[resource.EndpointType]
	s.VersionMap[resource.EndpointType] = endpoints
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
