// Package outputpatch changes what an earlier translation handed out
// without changing it: an Output is read-only once returned, and the
// publisher keeps the last one while Update makes the next, so every
// slice and map Update changes is a copy, made once per Update and only
// when something in it changed.
//
// It knows nothing of what the slices and maps hold.
package outputpatch

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
)

// Sorted returns old, sorted by name, with each named item replaced,
// added or (nil) removed, and the names whose item is not the same
// pointer as before. old is not modified; it is returned as is when
// nothing changed.
func Sorted[T comparable](old []T, items map[string]T, name func(T) string) ([]T, []string) {
	var zero T
	cmp := func(item T, n string) int { return strings.Compare(name(item), n) }
	var changed []string
	for n, item := range items {
		i, found := slices.BinarySearchFunc(old, n, cmp)
		if (found && old[i] != item) || (!found && item != zero) {
			changed = append(changed, n)
		}
	}
	if len(changed) == 0 {
		return old, nil
	}
	slices.Sort(changed)
	if len(changed) > 64 {
		return mergeSorted(old, items, changed, name), changed
	}
	out := slices.Clone(old)
	for _, n := range changed {
		i, found := slices.BinarySearchFunc(out, n, cmp)
		switch item := items[n]; {
		case item == zero:
			out = slices.Delete(out, i, i+1)
		case found:
			out[i] = item
		default:
			out = slices.Insert(out, i, item)
		}
	}
	return out, changed
}

// mergeSorted is Sorted's many-changes path: one pass over old.
func mergeSorted[T comparable](old []T, items map[string]T, changed []string, name func(T) string) []T {
	var zero T
	out := make([]T, 0, len(old)+len(changed))
	j := 0
	for _, item := range old {
		n := name(item)
		for j < len(changed) && changed[j] < n {
			if added := items[changed[j]]; added != zero {
				out = append(out, added)
			}
			j++
		}
		if j < len(changed) && changed[j] == n {
			if replaced := items[n]; replaced != zero {
				out = append(out, replaced)
			}
			j++
			continue
		}
		out = append(out, item)
	}
	for ; j < len(changed); j++ {
		if added := items[changed[j]]; added != zero {
			out = append(out, added)
		}
	}
	return out
}

// Map changes a map handed out before (M) through a copy, made at the
// first real change; M is the map to hand out next.
type Map[K comparable, V any] struct {
	M      map[K]V
	copied bool
}

func (c *Map[K, V]) write() {
	if !c.copied {
		c.M, c.copied = maps.Clone(c.M), true
		if c.M == nil {
			c.M = map[K]V{}
		}
	}
}

// Set stores v unless equal (nil: never equal) says it is there already.
func (c *Map[K, V]) Set(k K, v V, equal func(a, b V) bool) {
	if old, ok := c.M[k]; ok && equal != nil && equal(old, v) {
		return
	}
	c.write()
	c.M[k] = v
}

// Delete removes k, copying only when k is there.
func (c *Map[K, V]) Delete(k K) {
	if _, ok := c.M[k]; !ok {
		return
	}
	c.write()
	delete(c.M, k)
}

// SemanticallyEqual compares Kubernetes values as the API server does.
func SemanticallyEqual[T any](a, b T) bool { return equality.Semantic.DeepEqual(a, b) }

// Statuses is statuses with the patch's applied (nil: deleted), copied
// once if anything differs.
func Statuses[K comparable, S any](statuses map[K]S, patch map[K]*S) map[K]S {
	c := Map[K, S]{M: statuses}
	for k, st := range patch {
		if st == nil {
			c.Delete(k)
		} else {
			c.Set(k, *st, SemanticallyEqual)
		}
	}
	return c.M
}
