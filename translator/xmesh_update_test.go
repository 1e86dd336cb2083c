package translator_test

import (
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// TestUpdateFollowsXMeshes: each XMesh change (parameters added, handed
// to another controller, taken back, deleted, re-created), applied by
// Update, gives what Translate gives for the same objects.
func TestUpdateFollowsXMeshes(t *testing.T) {
	in, err := manifests.Unadmitted.Read([]string{filepath.Join(goldenDir, "xmesh.in.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	state := objectsOf(in)
	oursKey := types.NamespacedName{Name: "ours"}
	ours, ok := state[poolKey{translator.KindXMesh, oursKey}].obj.(*gwxv1a1.XMesh)
	if !ok {
		t.Fatalf("no XMesh ours in xmesh.in.yaml")
	}
	params := ours.DeepCopy()
	params.Generation++
	params.Spec.ParametersRef = &gwv1.ParametersReference{Kind: "ConfigMap", Name: "cm"}
	theirs := params.DeepCopy()
	theirs.Spec.ControllerName = "other.io/mesh"

	opts := translator.Options{ControllerName: translator.DefaultControllerName}
	tr := translator.New()
	first := tr.Translate(inputsOf(state), nil, fuzzNow, opts)
	if _, ok := first.GatewayAPI.XMeshes["ours"]; !ok {
		t.Fatalf("Translate gave no status to XMesh ours: %v", first.GatewayAPI.XMeshes)
	}
	for _, step := range []struct {
		name   string
		change translator.Change
		want   string // ours's Accepted reason; "" for no status
	}{
		{"parameters added", translator.Change{Kind: translator.KindXMesh, Key: oursKey, Object: params}, "InvalidParameters"},
		{"another controller's", translator.Change{Kind: translator.KindXMesh, Key: oursKey, Object: theirs}, ""},
		{"ours again", translator.Change{Kind: translator.KindXMesh, Key: oursKey, Object: ours}, "Accepted"},
		{"deleted", translator.Change{Kind: translator.KindXMesh, Key: oursKey}, ""},
		{"re-created", translator.Change{Kind: translator.KindXMesh, Key: oursKey, Object: ours}, "Accepted"},
	} {
		k := poolKey{step.change.Kind, step.change.Key}
		if step.change.Object == nil {
			delete(state, k)
		} else {
			state[k] = poolObject{step.change.Kind, step.change.Key, step.change.Object}
		}
		got, ok := tr.Update([]translator.Change{step.change}, nil, fuzzNow, opts)
		if !ok {
			t.Fatalf("%s: Update refused the change", step.name)
		}
		want := translator.Translate(inputsOf(state), nil, fuzzNow, opts)
		if diff := fuzzOutputDifference(want, got); diff != "" {
			t.Fatalf("%s: Update differs from Translate: %s", step.name, diff)
		}
		st, ok := got.GatewayAPI.XMeshes["ours"]
		switch {
		case step.want == "" && ok:
			t.Errorf("%s: XMesh ours has a status of ours: %+v", step.name, st)
		case step.want != "" && (!ok || len(st.Conditions) != 1 || st.Conditions[0].Reason != step.want):
			t.Errorf("%s: XMesh ours's status %+v, want Accepted reason %s", step.name, st, step.want)
		}
	}
}
