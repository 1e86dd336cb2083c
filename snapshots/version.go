package snapshots

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// Versions are content hashes, so equal content gives equal versions on
// every replica and an unchanged resource is never re-sent. One exception
// is deliberate: a load assignment's version also covers the clusters that
// read it, because Envoy keeps an updated cluster warming until it is sent
// its ClusterLoadAssignment again (xDS protocol, "Resource warming").
//
// Per-resource (delta) versions of clusters, secrets and listeners are
// go-control-plane's hash of their bytes; a load assignment's also covers
// its readers; a route configuration's is a hash of its virtual hosts'
// hashes (routeversion.go), so one route change does not hash them all.
// The delta server (package xds) puts these very versions on the wire, so
// the initial_resource_versions of an Envoy reconnecting to any replica
// match and nothing is sent again.

// encode digests items, sorted by name.
func encode(d *digests, items []types.Resource) ([]*digest, error) {
	out := make([]*digest, 0, len(items))
	for _, r := range items {
		dg, err := d.of(r)
		if err != nil {
			return nil, err
		}
		out = append(out, dg)
	}
	slices.SortFunc(out, func(a, b *digest) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// hashOf hashes length-prefixed chunks, so ("ab","c") and ("a","bc") differ.
func hashOf(chunks ...string) string {
	h := sha256.New()
	var length [8]byte
	for _, c := range chunks {
		binary.BigEndian.PutUint64(length[:], uint64(len(c)))
		h.Write(length[:])
		h.Write([]byte(c))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// typeVersion is the version of one type's whole content: a hash of every
// resource's name and content hash, in any order (contentSum).
func typeVersion(enc []*digest) string { return sumOf(enc).version() }

// noneVersion is the version of a type with no resources.
var noneVersion = typeVersion(nil)

// typeVersions are the per-type (SotW) versions of a fleet whose clusters,
// load assignments and secrets have the content versions given: the load
// assignments' also covers the clusters (see above).
func typeVersions(clusters, endpoints, secrets string) map[string]string {
	return map[string]string{
		resource.ClusterType:  clusters,
		resource.EndpointType: hashOf(endpoints, clusters),
		resource.SecretType:   secrets,
		resource.ListenerType: noneVersion,
		resource.RouteType:    noneVersion,
	}
}

// versions are the per-type (SotW) and per-resource (delta) versions of a
// fleet's resources.
type versions struct {
	byType     map[string]string
	byResource map[string]map[string]string
}

func versionsOf(d *digests, res fleetResources) (versions, error) {
	clusters, err := encode(d, asResources(res.clusters))
	if err != nil {
		return versions{}, err
	}
	endpoints, err := encode(d, asResources(res.endpoints))
	if err != nil {
		return versions{}, err
	}
	secrets, err := encode(d, asResources(res.secrets))
	if err != nil {
		return versions{}, err
	}
	v := versions{
		byType: typeVersions(typeVersion(clusters), typeVersion(endpoints), typeVersion(secrets)),
		byResource: map[string]map[string]string{
			resource.ClusterType:  wireVersions(clusters),
			resource.EndpointType: withReaders(endpoints, readers(res.clusters, clusters)),
			resource.SecretType:   wireVersions(secrets),
			resource.ListenerType: {},
			resource.RouteType:    {},
		},
	}
	return v, nil
}

// readers maps a load assignment name to the content hashes of the
// clusters that read it.
func readers(clusters []*clusterv3.Cluster, enc []*digest) map[string][]string {
	wireByName := make(map[string]string, len(enc))
	for _, e := range enc {
		wireByName[e.name] = e.wire
	}
	out := make(map[string][]string, len(clusters))
	for _, c := range clusters {
		out[edsName(c)] = append(out[edsName(c)], wireByName[c.GetName()])
	}
	return out
}

// wireVersions are the versions go-control-plane sends for these resources.
func wireVersions(enc []*digest) map[string]string {
	out := make(map[string]string, len(enc))
	for _, e := range enc {
		out[e.name] = e.wire
	}
	return out
}

// withReaders versions each load assignment with the clusters reading it.
func withReaders(enc []*digest, readers map[string][]string) map[string]string {
	out := make(map[string]string, len(enc))
	for _, e := range enc {
		out[e.name] = hashOf(append([]string{e.wire}, readers[e.name]...)...)
	}
	return out
}
