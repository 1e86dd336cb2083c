package pipeline

import (
	"cmp"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// servedView remembers which policies produced each served cluster and
// secret, so a NACKed resource can be traced to its policies. It is read
// from the xDS server's goroutines, hence the lock.
type servedView struct {
	mu      sync.RWMutex
	origins map[string][]types.NamespacedName
}

func (v *servedView) set(origins map[string][]types.NamespacedName) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.origins = origins
}

// policiesOf returns the policies behind the named resources, sorted and
// without duplicates.
func (v *servedView) policiesOf(resourceNames []string) []types.NamespacedName {
	v.mu.RLock()
	defer v.mu.RUnlock()
	var out []types.NamespacedName
	for _, name := range resourceNames {
		out = append(out, v.origins[name]...)
	}
	slices.SortFunc(out, func(a, b types.NamespacedName) int {
		if c := cmp.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return slices.Compact(out)
}
