package snapshots

import (
	"slices"
	"sort"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
)

// servedTypes are the xDS types tlsplane serves, in ADS warming order:
// clusters and their endpoints before the listeners that route to them,
// and the routes those listeners read. Secrets come last, as before
// listeners were served: clusters and listeners ask for them by name.
var servedTypes = []string{resource.ClusterType, resource.EndpointType, resource.ListenerType, resource.RouteType, resource.SecretType}

// ServedTypes are the types tlsplane serves, in ADS warming order: the
// order in which a stream is answered types that changed together.
func ServedTypes() []string { return slices.Clone(servedTypes) }

// Serves reports whether tlsplane serves typeURL (to every fleet, if only
// empty): anything else is answered empty and counted as "other".
func Serves(typeURL string) bool { return slices.Contains(servedTypes, typeURL) }

// everything is an unrestricted fleet's share of a translation.
func everything(out translator.Output) fleetResources {
	return fleetResources{clusters: out.Clusters, endpoints: out.Endpoints, secrets: out.Secrets}
}

// servedSnapshot is what a fleet is served: per type, its resources by
// name, each one's version and the type's version. The maps are read-only
// once the snapshot is published, except the whole translation's, which
// the next publish patches in place under the publisher's lock (patch.go).
type servedSnapshot struct {
	versions   map[string]string
	byType     map[string]map[string]types.Resource
	VersionMap map[string]map[string]string
	// routeWires are the route configurations' bytes to come, by name
	// (routewire.go).
	routeWires map[string]*routeWire
	// fleet is a Gateway fleet's own resources as checked; nil otherwise.
	fleet *fleetCheck
}

func newServedSnapshot() *servedSnapshot {
	return &servedSnapshot{versions: map[string]string{}, byType: map[string]map[string]types.Resource{}, VersionMap: map[string]map[string]string{}}
}

// GetVersion is typeURL's content version.
func (s *servedSnapshot) GetVersion(typeURL string) string { return s.versions[typeURL] }

// GetResources returns the shared, read-only map of typeURL's resources.
func (s *servedSnapshot) GetResources(typeURL string) map[string]types.Resource {
	return s.byType[typeURL]
}

// newSnapshot versions each type by its content and refuses an
// inconsistent result.
func newSnapshot(d *digests, res fleetResources) (*servedSnapshot, error) {
	byType := map[string][]types.Resource{
		resource.ClusterType:  asResources(res.clusters),
		resource.EndpointType: asResources(res.endpoints),
		resource.SecretType:   asResources(res.secrets),
		// Listeners and routes are a Gateway fleet's own (gatewaySnapshot):
		// every other fleet is served none.
		resource.ListenerType: nil,
		resource.RouteType:    nil,
	}
	v, err := versionsOf(d, res)
	if err != nil {
		return nil, err
	}
	snap := newServedSnapshot()
	snap.VersionMap = v.byResource
	for _, typeURL := range servedTypes {
		snap.setType(typeURL, v.byType[typeURL], byType[typeURL])
	}
	if err := checkConsistent(d, snap); err != nil {
		return nil, err
	}
	return snap, nil
}

// setType makes items typeURL's resources, at version.
func (s *servedSnapshot) setType(typeURL, version string, items []types.Resource) {
	s.versions[typeURL] = version
	named := make(map[string]types.Resource, len(items))
	for _, r := range items {
		named[cache.GetResourceName(r)] = r
	}
	s.byType[typeURL] = named
}

func asResources[T types.Resource](items []T) []types.Resource {
	out := make([]types.Resource, 0, len(items))
	for _, item := range items {
		out = append(out, item)
	}
	return out
}

// sameVersions: equal versions mean equal content, type by type.
func sameVersions(a, b *servedSnapshot) bool {
	for _, typeURL := range servedTypes {
		if a.GetVersion(typeURL) != b.GetVersion(typeURL) {
			return false
		}
	}
	return true
}

// versionAttrs are slog attributes naming each type's version.
func versionAttrs(s *servedSnapshot) []any {
	return []any{
		"cds_version", s.GetVersion(resource.ClusterType),
		"eds_version", s.GetVersion(resource.EndpointType),
		"lds_version", s.GetVersion(resource.ListenerType),
		"rds_version", s.GetVersion(resource.RouteType),
		"sds_version", s.GetVersion(resource.SecretType),
	}
}

func sortPolicies(p []k8stypes.NamespacedName) {
	sort.Slice(p, func(i, j int) bool { return p[i].String() < p[j].String() })
}
