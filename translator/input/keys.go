package input

import (
	"iter"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// SortedKeys returns a map's namespace/name keys by namespace, then name.
func SortedKeys[V any](m map[types.NamespacedName]V) []types.NamespacedName {
	keys := make([]types.NamespacedName, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	return keys
}

// SortedSeq returns the keys seq yields, by namespace, then name.
func SortedSeq(seq iter.Seq[types.NamespacedName]) []types.NamespacedName {
	return slices.SortedFunc(seq, compareKeys)
}

// compareKeys orders keys by namespace, then name.
func compareKeys(a, b types.NamespacedName) int {
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// SortedNames returns a string-keyed map's keys in order.
func SortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// SameKeysSorted is SortedKeys(m), returning last when it holds exactly
// m's keys: checking that costs one lookup per key, sorting far more.
func SameKeysSorted[V any](m map[types.NamespacedName]V, last []types.NamespacedName) []types.NamespacedName {
	if sameKeys(m, last) {
		return last
	}
	return SortedKeys(m)
}

// SameNamesSorted is SortedNames(m), returning last when it holds exactly
// m's keys.
func SameNamesSorted[V any](m map[string]V, last []string) []string {
	if sameKeys(m, last) {
		return last
	}
	return SortedNames(m)
}

func sameKeys[K comparable, V any](m map[K]V, keys []K) bool {
	if len(keys) != len(m) {
		return false
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// ByKey maps objects by their key; the last of a key wins.
func ByKey[T any](in []T, key func(T) types.NamespacedName) map[types.NamespacedName]T {
	m := make(map[types.NamespacedName]T, len(in))
	for _, o := range in {
		m[key(o)] = o
	}
	return m
}

// ValuesOf is a map's values in key order.
func ValuesOf[T any](m map[types.NamespacedName]T) []T {
	out := make([]T, 0, len(m))
	for _, nn := range SortedKeys(m) {
		out = append(out, m[nn])
	}
	return out
}

// UniqueSorted keeps one object per key (the last), sorted by key.
func UniqueSorted[T any](in []T, key func(T) types.NamespacedName) []T {
	return ValuesOf(ByKey(in, key))
}
