package crds

import structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

// pruneNode is a schema node as the library's pruning
// (structuralpruning.PruneWithOptions) reads it, built once: whether it
// would drop any field of a value is answered by one walk that copies no
// schema; only then is the library run, to drop them and name them.
// A nil *pruneNode is the library's nil schema (everything unknown).
type pruneNode struct {
	// preserve: x-kubernetes-preserve-unknown-fields.
	preserve bool
	// embedded: apiVersion, kind and metadata are kept as they are.
	embedded   bool
	properties map[string]*pruneNode
	// hasAdditional: additionalProperties is set, additional its schema.
	hasAdditional bool
	additional    *pruneNode
	items         *pruneNode
}

func newPruneNode(s *structuralschema.Structural) *pruneNode {
	if s == nil {
		return nil
	}
	n := &pruneNode{preserve: s.XPreserveUnknownFields, embedded: s.XEmbeddedResource, items: newPruneNode(s.Items)}
	if s.Properties != nil {
		n.properties = make(map[string]*pruneNode, len(s.Properties))
		for name, p := range s.Properties {
			n.properties[name] = newPruneNode(&p)
		}
	}
	if ap := s.AdditionalProperties; ap != nil {
		n.hasAdditional = true
		n.additional = newPruneNode(ap.Structural)
	}
	return n
}

var metaField = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// wouldPrune: pruning x by n (the resource root when root) would drop a
// field; false means the library's pruning changes nothing and names no
// unknown field.
func (n *pruneNode) wouldPrune(x any, root bool) bool {
	embedded := root || n != nil && n.embedded
	if n != nil && n.preserve {
		return n.wouldPruneKept(x, embedded)
	}
	switch x := x.(type) {
	case map[string]any:
		if n == nil {
			return len(x) > 0
		}
		for k, v := range x {
			if embedded && metaField[k] {
				continue
			}
			if p, declared := n.properties[k]; declared {
				if p.wouldPrune(v, false) {
					return true
				}
			} else if !n.hasAdditional || n.additional.wouldPrune(v, false) {
				return true
			}
		}
	case []any:
		var items *pruneNode
		if n != nil {
			items = n.items
		}
		for _, v := range x {
			if items.wouldPrune(v, false) {
				return true
			}
		}
	}
	return false
}

// wouldPruneKept is wouldPrune under x-kubernetes-preserve-unknown-fields
// (the library's skipPrune): unknown fields stay, known ones are pruned.
func (n *pruneNode) wouldPruneKept(x any, embedded bool) bool {
	if n == nil {
		return false
	}
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			if embedded && metaField[k] {
				continue
			}
			if p, declared := n.properties[k]; declared {
				if p.wouldPrune(v, false) {
					return true
				}
			} else if n.hasAdditional && n.additional.wouldPrune(v, false) {
				return true
			}
		}
	case []any:
		for _, v := range x {
			if n.items.wouldPruneKept(v, n.items != nil && n.items.embedded) {
				return true
			}
		}
	}
	return false
}
