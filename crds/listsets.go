package crds

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// listSetNode is a schema node under which a list is of
// x-kubernetes-list-type set or map: only such a list can fail the
// library's ValidateListSetsAndMaps, and only when it has two items or
// more or an item that is not an object. The library walks every value
// and builds a field path for each; an object holding no such list needs
// neither.
type listSetNode struct {
	setOrMap   bool
	items      *listSetNode
	properties map[string]*listSetNode
	additional *listSetNode
}

// newListSetNode is s's node, nil when no list under s is a set or map.
func newListSetNode(s *structuralschema.Structural) *listSetNode {
	if s == nil {
		return nil
	}
	n := &listSetNode{
		setOrMap: s.XListType != nil && (*s.XListType == "set" || *s.XListType == "map"),
		items:    newListSetNode(s.Items),
	}
	for name, p := range s.Properties {
		if c := newListSetNode(&p); c != nil {
			if n.properties == nil {
				n.properties = map[string]*listSetNode{}
			}
			n.properties[name] = c
		}
	}
	if ap := s.AdditionalProperties; ap != nil {
		n.additional = newListSetNode(ap.Structural)
	}
	if !n.setOrMap && n.items == nil && n.properties == nil && n.additional == nil {
		return nil
	}
	return n
}

// mayRefuse: the library's ValidateListSetsAndMaps could find an error in
// v, walked as it walks (additional properties and properties of a map,
// items of a list, by the value's kind); false means it finds none.
func (n *listSetNode) mayRefuse(v any) bool {
	if n == nil {
		return false
	}
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if n.additional.mayRefuse(e) || n.properties[k].mayRefuse(e) {
				return true
			}
		}
	case []any:
		if n.setOrMap {
			if len(v) > 1 {
				return true
			}
			for _, e := range v {
				if _, isObject := e.(map[string]any); e != nil && !isObject {
					return true
				}
			}
		}
		for _, e := range v {
			if n.items.mayRefuse(e) {
				return true
			}
		}
	}
	return false
}
