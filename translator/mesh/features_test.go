package mesh

import (
	"slices"
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// TestSupportedFeaturesAreMeshFeatures: every claimed name is one of the
// Gateway API's mesh features (a Gateway feature here would be dropped
// by the suite, a typo would claim nothing), sorted and without
// duplicates, and the core "Mesh" is among them.
func TestSupportedFeaturesAreMeshFeatures(t *testing.T) {
	known := features.SetsToNamesSet(features.MeshCoreFeatures, features.MeshExtendedFeatures)
	for _, f := range SupportedFeatures {
		if !known.Has(features.FeatureName(f)) {
			t.Errorf("mesh.SupportedFeatures: %q is not a mesh feature of the Gateway API", f)
		}
	}
	if !slices.IsSorted(SupportedFeatures) || len(slices.Compact(slices.Clone(SupportedFeatures))) != len(SupportedFeatures) {
		t.Errorf("mesh.SupportedFeatures %q: want sorted, each once", SupportedFeatures)
	}
	if !slices.Contains(SupportedFeatures, gwv1.FeatureName(features.SupportMesh)) {
		t.Errorf("mesh.SupportedFeatures %q: want the core feature %q", SupportedFeatures, features.SupportMesh)
	}
}
