package input

import gwv1 "sigs.k8s.io/gateway-api/apis/v1"

// GroupKind is a reference's group and kind with the API's defaults: the
// core group, and defaultKind (Service for a backendRef, Secret for a
// certificate reference).
func GroupKind(group *gwv1.Group, kind *gwv1.Kind, defaultKind string) (string, string) {
	g, k := "", defaultKind
	if group != nil {
		g = string(*group)
	}
	if kind != nil {
		k = string(*kind)
	}
	return g, k
}
