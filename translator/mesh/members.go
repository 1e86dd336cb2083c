package mesh

import corev1 "k8s.io/api/core/v1"

// Label, with the value Enabled, puts a namespace in the mesh: its
// Services are parents mesh routes may name and destinations its
// sidecars are given listeners for, and its workloads get a fleet.
const (
	Label   = "tlsplane.io/mesh"
	Enabled = "enabled"
)

// Members are the namespaces in the mesh.
type Members map[string]bool

// Joined says whether ns is labelled Label=Enabled.
func Joined(ns *corev1.Namespace) bool { return ns != nil && ns.Labels[Label] == Enabled }

// MembersOf are the namespaces labelled Label=Enabled; nil when none is,
// which makes the mesh's every step a no-op.
func MembersOf(namespaces []*corev1.Namespace) Members {
	var m Members
	for _, ns := range namespaces {
		if !Joined(ns) {
			continue
		}
		if m == nil {
			m = Members{}
		}
		m[ns.Name] = true
	}
	return m
}
