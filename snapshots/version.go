package snapshots

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// Versions are content hashes, so equal content gives equal versions on
// every replica and an unchanged resource is never re-sent. One exception
// is deliberate: a load assignment's version also covers the clusters that
// read it, because Envoy keeps an updated cluster warming until it is sent
// its ClusterLoadAssignment again (xDS protocol, "Resource warming").
//
// Per-resource (delta) versions of clusters and secrets are
// go-control-plane's own hash, the one it puts on the wire, so the
// initial_resource_versions of an Envoy reconnecting to any replica match.
// A load assignment's wire version stays go-control-plane's content hash
// while the cache compares ours, so a reconnecting delta Envoy is sent its
// load assignments once more; that is the price of prompt warming.

// encoded is a resource's name and deterministic bytes.
type encoded struct {
	name  string
	bytes []byte
}

// encode marshals items deterministically, sorted by name.
func encode(items []types.Resource) ([]encoded, error) {
	out := make([]encoded, 0, len(items))
	for _, r := range items {
		b, err := cache.MarshalResource(r)
		if err != nil {
			return nil, fmt.Errorf("resource %q: %w", cache.GetResourceName(r), err)
		}
		out = append(out, encoded{name: cache.GetResourceName(r), bytes: b})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// hashOf hashes length-prefixed chunks, so ("ab","c") and ("a","bc") differ.
func hashOf(chunks ...[]byte) string {
	h := sha256.New()
	var length [8]byte
	for _, c := range chunks {
		binary.BigEndian.PutUint64(length[:], uint64(len(c)))
		h.Write(length[:])
		h.Write(c)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// typeVersion is the version of one type's whole content.
func typeVersion(enc []encoded) string {
	chunks := make([][]byte, 0, 2*len(enc))
	for _, e := range enc {
		chunks = append(chunks, []byte(e.name), e.bytes)
	}
	return hashOf(chunks...)
}

// versions are the per-type (SotW) and per-resource (delta) versions of a
// fleet's resources.
type versions struct {
	byType     map[string]string
	byResource map[string]map[string]string
}

func versionsOf(res fleetResources) (versions, error) {
	clusters, err := encode(asResources(res.clusters))
	if err != nil {
		return versions{}, err
	}
	endpoints, err := encode(asResources(res.endpoints))
	if err != nil {
		return versions{}, err
	}
	secrets, err := encode(asResources(res.secrets))
	if err != nil {
		return versions{}, err
	}
	cds := typeVersion(clusters)
	v := versions{
		byType: map[string]string{
			resource.ClusterType:  cds,
			resource.EndpointType: hashOf([]byte(typeVersion(endpoints)), []byte(cds)),
			resource.SecretType:   typeVersion(secrets),
		},
		byResource: map[string]map[string]string{
			resource.ClusterType:  wireVersions(clusters),
			resource.EndpointType: withReaders(endpoints, readers(res.clusters, clusters)),
			resource.SecretType:   wireVersions(secrets),
		},
	}
	return v, nil
}

// readers maps a load assignment name to the bytes of the clusters that
// read it.
func readers(clusters []*clusterv3.Cluster, enc []encoded) map[string][][]byte {
	bytesByName := make(map[string][]byte, len(enc))
	for _, e := range enc {
		bytesByName[e.name] = e.bytes
	}
	out := map[string][][]byte{}
	for _, c := range clusters {
		out[edsName(c)] = append(out[edsName(c)], bytesByName[c.GetName()])
	}
	return out
}

// wireVersions are the versions go-control-plane sends for these resources.
func wireVersions(enc []encoded) map[string]string {
	out := make(map[string]string, len(enc))
	for _, e := range enc {
		out[e.name] = cache.HashResource(e.bytes)
	}
	return out
}

// withReaders versions each load assignment with the clusters reading it.
func withReaders(enc []encoded, readers map[string][][]byte) map[string]string {
	out := make(map[string]string, len(enc))
	for _, e := range enc {
		out[e.name] = hashOf(append([][]byte{e.bytes}, readers[e.name]...)...)
	}
	return out
}
