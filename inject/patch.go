package inject

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlsplane/tlsplane/translator/mesh"
)

// Op is one JSONPatch (RFC 6902) operation.
type Op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// Decision is what injection does with one Pod: Patch when it injects,
// else Skipped says why not. Decide's error refuses the Pod instead.
type Decision struct {
	Patch   []Op
	Skipped string
}

// Decide injects pod, created in ns, when the namespace is in the mesh
// (sel), the Pod has not opted out and holds none of our containers.
// The patch inserts our three init containers before the Pod's own, so
// its init containers already run in the mesh, and leaves every other
// field as the API server holds it (no whole-list replacement that could
// drop fields this build does not know).
func Decide(c Config, sel *mesh.Selector, ns *corev1.Namespace, pod *corev1.Pod) (Decision, error) {
	if !sel.Joined(ns) {
		return Decision{Skipped: fmt.Sprintf("namespace %s is not in the mesh (%s)", nsName(ns), sel)}, nil
	}
	out, err := optedOut(pod)
	if err != nil {
		return Decision{}, err
	}
	if out {
		return Decision{Skipped: "annotated " + AnnotationMesh + ": " + Disabled}, nil
	}
	if name, ok := injected(pod); ok {
		return Decision{Skipped: "injected already: it has container " + name}, nil
	}
	// The capture would program the node's network namespace.
	if pod.Spec.HostNetwork {
		return Decision{Skipped: "hostNetwork: the capture would redirect the node's traffic"}, nil
	}
	exclude, err := excludedPorts(pod, c)
	if err != nil {
		return Decision{}, err
	}
	ourVolumes := volumes(c)
	for _, v := range pod.Spec.Volumes {
		for _, o := range ourVolumes {
			if v.Name == o.Name {
				return Decision{}, fmt.Errorf("spec.volumes: %q is a name injection gives its own volume; rename it or annotate the Pod %s: %s", v.Name, AnnotationMesh, Disabled)
			}
		}
	}

	var patch []Op
	ours := initContainers(c, exclude)
	if len(pod.Spec.InitContainers) == 0 {
		patch = append(patch, Op{"add", "/spec/initContainers", ours})
	} else {
		for i, ctr := range ours {
			patch = append(patch, Op{"add", fmt.Sprintf("/spec/initContainers/%d", i), ctr})
		}
	}
	if len(pod.Spec.Volumes) == 0 {
		patch = append(patch, Op{"add", "/spec/volumes", ourVolumes})
	} else {
		for _, v := range ourVolumes {
			patch = append(patch, Op{"add", "/spec/volumes/-", v})
		}
	}
	return Decision{Patch: patch}, nil
}

// injected names the first of our containers pod holds.
func injected(pod *corev1.Pod) (string, bool) {
	ours := []string{CaptureContainer, BootstrapContainer, SidecarContainer}
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, ctr := range list {
			if slices.Contains(ours, ctr.Name) {
				return ctr.Name, true
			}
		}
	}
	return "", false
}

func nsName(ns *corev1.Namespace) string {
	if ns == nil {
		return "(unknown)"
	}
	return ns.Name
}
