package snapshots

import (
	"k8s.io/apimachinery/pkg/types"
)

// Governed maps each policy of the last published translation to the
// clusters it produced, sorted by name (Output.Clusters is): the inverse
// of Origins, restricted to clusters, for `tlsplane status policy`. It
// costs a pass over the clusters; nil before the first publish.
func (p *Publisher) Governed() map[types.NamespacedName][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		return nil
	}
	out := map[types.NamespacedName][]string{}
	for _, c := range p.last.Clusters {
		for _, policy := range p.last.Origins[c.GetName()] {
			out[policy] = append(out[policy], c.GetName())
		}
	}
	return out
}
