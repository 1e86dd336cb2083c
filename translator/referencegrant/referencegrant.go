// Package referencegrant owns the ReferenceGrant rule: whether an object
// may refer to one in another namespace. Gateways (certificates, client
// CAs, backend client certificates) and routes (backends) ask it. It is a
// leaf: it must import nothing of the translator.
package referencegrant

import (
	"slices"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Grants are the ReferenceGrants by the namespace they grant into.
type Grants map[string][]*gwv1.ReferenceGrant

// New indexes grants by their namespace ("default" when unset, as every
// input object's).
func New(grants []*gwv1.ReferenceGrant) Grants {
	g := Grants{}
	for _, rg := range grants {
		ns := rg.Namespace
		if ns == "" {
			ns = "default"
		}
		g[ns] = append(g[ns], rg)
	}
	return g
}

// Reference is one object referring to another across namespaces.
type Reference struct {
	FromGroup, FromKind, FromNamespace string
	ToGroup, ToKind, ToNamespace       string
	ToName                             string
}

// Permits applies ReferenceGrants: a reference within a namespace needs
// none; across namespaces, a grant in the target's namespace must name the
// referrer's group, kind and namespace, and the target's group and kind
// (and name, when it names one).
func (g Grants) Permits(r Reference) bool {
	if r.FromNamespace == r.ToNamespace {
		return true
	}
	for _, rg := range g[r.ToNamespace] {
		from := slices.ContainsFunc(rg.Spec.From, func(f gwv1.ReferenceGrantFrom) bool {
			return string(f.Group) == r.FromGroup && string(f.Kind) == r.FromKind && string(f.Namespace) == r.FromNamespace
		})
		if !from {
			continue
		}
		to := slices.ContainsFunc(rg.Spec.To, func(t gwv1.ReferenceGrantTo) bool {
			return string(t.Group) == r.ToGroup && string(t.Kind) == r.ToKind && (t.Name == nil || string(*t.Name) == r.ToName)
		})
		if to {
			return true
		}
	}
	return false
}
