package xds

import (
	"fmt"
	"strings"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// Placeholders of a MeshIdentity template.
const (
	NamespacePlaceholder      = "{namespace}"
	ServiceAccountPlaceholder = "{serviceaccount}"
)

// DefaultMeshIdentity is the SPIFFE ID a mesh workload presents: its
// ServiceAccount's, as Kubernetes meshes name it.
const DefaultMeshIdentity = "spiffe://cluster.local/ns/" + NamespacePlaceholder + "/sa/" + ServiceAccountPlaceholder

// MeshIdentity is the rule binding a workload's client certificate to the
// mesh fleet of its namespace (plan.MeshFleet): one URI SAN must be the
// template with the fleet's namespace and some ServiceAccount name. Any
// ServiceAccount of a namespace reads that namespace's fleet (a fleet per
// namespace, docs/mesh.md) and no other fleet.
type MeshIdentity struct {
	prefix, middle, suffix string
}

// ParseMeshIdentity checks a template such as DefaultMeshIdentity: one
// {namespace}, then one {serviceaccount}, and nothing else in braces.
func ParseMeshIdentity(template string) (*MeshIdentity, error) {
	if strings.Count(template, NamespacePlaceholder) != 1 || strings.Count(template, ServiceAccountPlaceholder) != 1 {
		return nil, fmt.Errorf("mesh identity %q: want exactly one %s and one %s", template, NamespacePlaceholder, ServiceAccountPlaceholder)
	}
	prefix, rest, _ := strings.Cut(template, NamespacePlaceholder)
	middle, suffix, ok := strings.Cut(rest, ServiceAccountPlaceholder)
	if !ok || middle == "" {
		return nil, fmt.Errorf("mesh identity %q: %s must come first, and something must separate it from %s", template, NamespacePlaceholder, ServiceAccountPlaceholder)
	}
	return &MeshIdentity{prefix: prefix, middle: middle, suffix: suffix}, nil
}

func (m *MeshIdentity) String() string {
	return m.prefix + NamespacePlaceholder + m.middle + ServiceAccountPlaceholder + m.suffix
}

// serviceAccountOf is the ServiceAccount a URI SAN names in namespace,
// false when it names none there: the name must be non-empty and hold no
// '/', so no identity of one namespace reads as another's.
func (m *MeshIdentity) serviceAccountOf(namespace, uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, m.prefix+namespace+m.middle)
	if !ok {
		return "", false
	}
	sa, ok := strings.CutSuffix(rest, m.suffix)
	if !ok || sa == "" || strings.Contains(sa, "/") {
		return "", false
	}
	return sa, true
}

// meshNamespace is the namespace of fleet when it is a mesh fleet.
func meshNamespace(fleet string) (string, bool) { return plan.MeshFleetNamespace(fleet) }

// Mesh is the rule for mesh fleets WithMesh gave f, nil when they follow
// f's template: for the command's flag test to read what it wired.
func (f *FleetIdentity) Mesh() *MeshIdentity { return f.mesh }
