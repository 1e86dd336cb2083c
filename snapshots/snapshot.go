package snapshots

import (
	"sort"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
)

// servedTypes are the xDS types tlsplane serves, in ADS warming order.
var servedTypes = []string{resource.ClusterType, resource.EndpointType, resource.SecretType}

// everything is an unrestricted fleet's share of a translation.
func everything(out translator.Output) fleetResources {
	return fleetResources{clusters: out.Clusters, endpoints: out.Endpoints, secrets: out.Secrets}
}

// newSnapshot versions each type by its content and refuses an
// inconsistent result.
func newSnapshot(d *digests, res fleetResources) (*cache.Snapshot, error) {
	byType := map[string][]types.Resource{
		resource.ClusterType:  asResources(res.clusters),
		resource.EndpointType: asResources(res.endpoints),
		resource.SecretType:   asResources(res.secrets),
	}
	v, err := versionsOf(d, res)
	if err != nil {
		return nil, err
	}
	// A VersionMap set here is kept by ConstructVersionMap: delta gets ours.
	snap := &cache.Snapshot{VersionMap: v.byResource}
	for _, typeURL := range servedTypes {
		snap.Resources[cache.GetResponseType(typeURL)] = cache.NewResources(v.byType[typeURL], byType[typeURL])
	}
	if err := checkConsistent(d, snap); err != nil {
		return nil, err
	}
	return snap, nil
}

func asResources[T types.Resource](items []T) []types.Resource {
	out := make([]types.Resource, 0, len(items))
	for _, item := range items {
		out = append(out, item)
	}
	return out
}

// sameVersions: equal versions mean equal content, type by type.
func sameVersions(a, b *cache.Snapshot) bool {
	for _, typeURL := range servedTypes {
		if a.GetVersion(typeURL) != b.GetVersion(typeURL) {
			return false
		}
	}
	return true
}

// versionAttrs are slog attributes naming each type's version.
func versionAttrs(s *cache.Snapshot) []any {
	return []any{
		"cds_version", s.GetVersion(resource.ClusterType),
		"eds_version", s.GetVersion(resource.EndpointType),
		"sds_version", s.GetVersion(resource.SecretType),
	}
}

func sortPolicies(p []k8stypes.NamespacedName) {
	sort.Slice(p, func(i, j int) bool { return p[i].String() < p[j].String() })
}
