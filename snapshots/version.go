package snapshots

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
)

// typeVersion is the version of one resource type: a hash of its names and
// deterministic bytes, so equal content gives an equal version on every
// replica and an unchanged type is never re-sent.
func typeVersion(items []types.Resource) (string, error) {
	sorted := append([]types.Resource(nil), items...)
	sort.Slice(sorted, func(i, j int) bool { return cache.GetResourceName(sorted[i]) < cache.GetResourceName(sorted[j]) })
	h := sha256.New()
	var length [8]byte
	for _, r := range sorted {
		name := cache.GetResourceName(r)
		b, err := cache.MarshalResource(r)
		if err != nil {
			return "", fmt.Errorf("resource %q: %w", name, err)
		}
		// Length prefixes keep ("ab","c") and ("a","bc") apart.
		binary.BigEndian.PutUint64(length[:], uint64(len(name)))
		h.Write(length[:])
		h.Write([]byte(name))
		binary.BigEndian.PutUint64(length[:], uint64(len(b)))
		h.Write(length[:])
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
