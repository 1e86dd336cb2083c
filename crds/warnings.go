package crds

import (
	"fmt"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeversion "k8s.io/apimachinery/pkg/version"
)

// defaultDeprecationWarning is the API server's warning for a deprecated
// version that names none: it points at the newest served version that is
// not deprecated and newer than it.
func defaultDeprecationWarning(deprecated string, spec apiextensionsv1.CustomResourceDefinitionSpec) string {
	msg := fmt.Sprintf("%s/%s %s is deprecated", spec.Group, deprecated, spec.Names.Kind)
	var newer []string
	for _, v := range spec.Versions {
		if v.Served && !v.Deprecated && kubeversion.CompareKubeAwareVersionStrings(deprecated, v.Name) < 0 {
			newer = append(newer, v.Name)
		}
	}
	if len(newer) == 0 {
		return msg
	}
	sort.Slice(newer, func(i, j int) bool { return kubeversion.CompareKubeAwareVersionStrings(newer[i], newer[j]) > 0 })
	return msg + fmt.Sprintf("; use %s/%s %s", spec.Group, newer[0], spec.Names.Kind)
}

// standardFinalizers are the finalizers Kubernetes itself names without a
// domain.
var standardFinalizers = map[string]bool{"orphan": true, "foregroundDeletion": true, "kubernetes": true}

// finalizerWarnings are the API server's warnings on a create's
// finalizers (WarningsOnCreate of a custom resource).
func finalizerWarnings(finalizers []string) []string {
	path := field.NewPath("metadata", "finalizers")
	sorted := append([]string(nil), finalizers...)
	sort.Strings(sorted)
	var out []string
	for i, f := range sorted {
		if i > 0 && sorted[i-1] == f {
			continue
		}
		for _, msg := range validation.IsQualifiedName(f) {
			out = append(out, fmt.Sprintf("%s: %q: %s", path, f, msg))
		}
		if !strings.Contains(f, "/") && !standardFinalizers[f] {
			if strings.Contains(f, ".") {
				out = append(out, fmt.Sprintf("%s: %q: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers", path, f))
			} else {
				out = append(out, fmt.Sprintf("%s: %q: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers", path, f))
			}
		}
	}
	return out
}
