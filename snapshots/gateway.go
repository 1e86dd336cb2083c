package snapshots

import (
	"maps"

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
type fleetPart struct {
	listeners, routes, secrets []*digest
	own                        *translator.FleetResources
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
	if part.secrets, err = encode(d, asResources(own.Secrets)); err != nil {
		return fleetPart{}, err
	}
	part.own = own
	if err := checkListeners(part, base.GetResources(resource.SecretType)); err != nil {
		return fleetPart{}, err
	}
	return part, nil
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
	want := map[string]string{
		resource.ClusterType:  base.GetVersion(resource.ClusterType),
		resource.EndpointType: base.GetVersion(resource.EndpointType),
		resource.ListenerType: lds,
		resource.RouteType:    rds,
		resource.SecretType:   sds,
	}
	if prev != nil && hasVersions(prev, want) {
		return prev, nil
	}

	snap := newServedSnapshot()
	for _, typeURL := range []string{resource.ClusterType, resource.EndpointType} {
		snap.share(base, typeURL)
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

// mergeSecrets serves base's secrets and the fleet's own, at version.
// checkListeners made sure no name is in both.
func (s *servedSnapshot) mergeSecrets(base *servedSnapshot, part fleetPart, version string) {
	named := maps.Clone(base.byType[resource.SecretType])
	versions := maps.Clone(base.VersionMap[resource.SecretType])
	if named == nil {
		named, versions = map[string]types.Resource{}, map[string]string{}
	}
	for i, secret := range part.own.Secrets {
		name := secret.GetName()
		named[name] = secret
		versions[name] = part.secretWire(i)
	}
	s.versions[resource.SecretType] = version
	s.byType[resource.SecretType] = named
	s.VersionMap[resource.SecretType] = versions
}

// secretWire is the wire version of own.Secrets[i]; part.secrets is the
// same resources sorted by name, as own.Secrets is (the translator's
// contract), but a lookup by name does not rely on it.
func (p fleetPart) secretWire(i int) string {
	name := p.own.Secrets[i].GetName()
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
