package manifests

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/input"
)

// Part is the objects of one source file.
type Part struct {
	Source string
	Inputs translator.Inputs
}

// Merge joins parts in order. An object (kind, namespace, name) defined in
// two parts is kept from the first, with a warning naming both sources, so
// the translator never sees two objects with one name. Cluster-scoped
// objects (GatewayClass, Namespace) have an empty namespace, so their key is
// the name alone.
func Merge(parts []Part, warn func(string)) translator.Inputs {
	if warn == nil {
		warn = func(string) {}
	}
	var out translator.Inputs
	m := merger{owner: map[[3]string]string{}, warn: warn}
	for _, p := range parts {
		for _, k := range input.ObjectKinds {
			mergeKind(m, k, p.Source, &out, k.Objects(&p.Inputs))
		}
	}
	return out
}

// merger remembers which source defined each (kind, namespace, name).
type merger struct {
	owner map[[3]string]string
	warn  func(string)
}

// mergeKind adds to dst the objects of kind from source whose key no
// earlier source defined.
func mergeKind(m merger, kind input.ObjectKind, source string, dst *translator.Inputs, src []metav1.Object) {
	for _, o := range src {
		k := [3]string{string(kind.Kind()), o.GetNamespace(), o.GetName()}
		if first, dup := m.owner[k]; dup {
			m.warn(fmt.Sprintf("%s: %s %s ignored: already defined in %s", source, kind.Kind(), qualified(o), first))
			continue
		}
		m.owner[k] = source
		kind.Add(dst, o)
	}
}

// qualified is namespace/name, or the name alone for a cluster-scoped object.
func qualified(o metav1.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}
