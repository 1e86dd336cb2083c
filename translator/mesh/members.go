package mesh

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Label, with the value Enabled, puts a namespace in the mesh by
// default (DefaultSelector): its Services are parents mesh routes may
// name and destinations its sidecars are given listeners for, and its
// workloads get a fleet.
const (
	Label   = "tlsplane.io/mesh"
	Enabled = "enabled"
)

// Selector picks the namespaces in the mesh by their labels
// (--mesh-namespaces). It is one value for the process, compared by
// pointer in translator.Options; nil is DefaultSelector.
type Selector struct{ labels labels.Selector }

// DefaultSelector is Label=Enabled.
var DefaultSelector = &Selector{labels.SelectorFromSet(labels.Set{Label: Enabled})}

// ParseSelector reads a Kubernetes label selector ("tlsplane.io/mesh=enabled",
// "gateway-conformance in (mesh,mesh-consumer)"). An empty one is refused:
// it would put every namespace of the cluster in the mesh.
func ParseSelector(text string) (*Selector, error) {
	sel, err := labels.Parse(text)
	if err != nil {
		return nil, err
	}
	if sel.Empty() {
		return nil, fmt.Errorf("%q selects every namespace; name the label that puts a namespace in the mesh (default %s)", text, DefaultSelector)
	}
	return &Selector{sel}, nil
}

// String is the selector as ParseSelector reads it.
func (s *Selector) String() string { return s.orDefault().labels.String() }

func (s *Selector) orDefault() *Selector {
	if s == nil {
		return DefaultSelector
	}
	return s
}

// Members are the namespaces in the mesh.
type Members map[string]bool

// Joined says whether ns is in the mesh: its labels match s.
func (s *Selector) Joined(ns *corev1.Namespace) bool {
	return ns != nil && s.orDefault().labels.Matches(labels.Set(ns.Labels))
}

// MembersOf are the namespaces s selects; nil when none is, which makes
// the mesh's every step a no-op.
func (s *Selector) MembersOf(namespaces []*corev1.Namespace) Members {
	var m Members
	for _, ns := range namespaces {
		if !s.Joined(ns) {
			continue
		}
		if m == nil {
			m = Members{}
		}
		m[ns.Name] = true
	}
	return m
}
