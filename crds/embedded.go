package crds

import structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

// holdsEmbeddedResource says whether a node reached from s by properties,
// items or additional properties is an x-kubernetes-embedded-resource:
// below the root, the library's ObjectMeta coercion and validation act
// only on those, so without one they change and find nothing.
func holdsEmbeddedResource(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if s.XEmbeddedResource || holdsEmbeddedResource(s.Items) {
		return true
	}
	if ap := s.AdditionalProperties; ap != nil && holdsEmbeddedResource(ap.Structural) {
		return true
	}
	for name := range s.Properties {
		p := s.Properties[name]
		if holdsEmbeddedResource(&p) {
			return true
		}
	}
	return false
}
