package translator_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/mesh"
)

// TestMeshNamespacesSelector: with Options.MeshNamespaces, the namespaces
// its selector matches are the mesh and tlsplane.io/mesh means nothing
// (the conformance suite labels its own namespaces); Update follows the
// same selector as Translate.
func TestMeshNamespacesSelector(t *testing.T) {
	sel, err := mesh.ParseSelector("gateway-conformance in (mesh,mesh-consumer)")
	if err != nil {
		t.Fatal(err)
	}
	opts := translator.Options{MeshNamespaces: sel}
	in := meshInputs(t)
	for i, ns := range in.Namespaces {
		ns = ns.DeepCopy()
		switch ns.Name {
		case "shop":
			ns.Labels = map[string]string{"gateway-conformance": "mesh"}
		case "caller":
			ns.Labels = map[string]string{mesh.Label: mesh.Enabled} // the default label, not the selector's
		}
		in.Namespaces[i] = ns
	}
	tr := translator.New()
	out := tr.Translate(in, nil, goldenNow, opts)
	if got := meshFleetNames(out); !slices.Equal(got, []string{"Mesh/shop"}) {
		t.Fatalf("mesh fleets %v, want Mesh/shop alone: caller's label is not the selector's", got)
	}
	consumer := out.GatewayAPI.HTTPRoutes[types.NamespacedName{Namespace: "caller", Name: "consumer"}]
	if len(consumer.Parents) != 1 || consumer.Parents[0].Conditions[0].Reason != "NoMatchingParent" {
		t.Fatalf("caller's consumer route: %+v, want NoMatchingParent", consumer.Parents)
	}
	if msg := consumer.Parents[0].Conditions[0].Message; msg != "namespace caller is not in the mesh (its labels do not match gateway-conformance in (mesh,mesh-consumer)): a consumer route applies only to callers in its own namespace" {
		t.Errorf("message %q does not name the selector", msg)
	}
	if got := meshFleetNames(translator.Translate(in, nil, goldenNow, translator.Options{})); !slices.Equal(got, []string{"Mesh/caller"}) {
		t.Errorf("mesh fleets without the selector %v, want Mesh/caller alone (tlsplane.io/mesh=enabled)", got)
	}

	joining := in.Namespaces[slices.IndexFunc(in.Namespaces, func(n *corev1.Namespace) bool { return n.Name == "caller" })].DeepCopy()
	joining.Labels = map[string]string{"gateway-conformance": "mesh-consumer"}
	for i, ns := range in.Namespaces {
		if ns.Name == "caller" {
			in.Namespaces[i] = joining
		}
	}
	next, ok := tr.Update([]translator.Change{{Kind: translator.KindNamespace, Key: types.NamespacedName{Name: "caller"}, Object: joining}}, nil, goldenNow, opts)
	if !ok {
		t.Fatal("Update refused a namespace edit")
	}
	if diff := fuzzOutputDifference(translator.Translate(in, nil, goldenNow, opts), next); diff != "" {
		t.Fatalf("Update differs from Translate: %s", diff)
	}
	if got := meshFleetNames(next); !slices.Equal(got, []string{"Mesh/caller", "Mesh/shop"}) {
		t.Errorf("mesh fleets after caller joined by the selector's label: %v", got)
	}
}

func TestParseMeshSelector(t *testing.T) {
	for _, tc := range []struct {
		text, want string
		ok         bool
	}{
		{"tlsplane.io/mesh=enabled", "tlsplane.io/mesh=enabled", true},
		{"gateway-conformance in (mesh,mesh-consumer)", "gateway-conformance in (mesh,mesh-consumer)", true},
		{"", "", false},       // every namespace
		{"a in (", "", false}, // not a selector
	} {
		sel, err := mesh.ParseSelector(tc.text)
		if (err == nil) != tc.ok {
			t.Errorf("%q: error %v, want ok=%v", tc.text, err, tc.ok)
			continue
		}
		if tc.ok && sel.String() != tc.want {
			t.Errorf("%q: %q", tc.text, sel.String())
		}
	}
	if got := (*mesh.Selector)(nil).String(); got != "tlsplane.io/mesh=enabled" {
		t.Errorf("nil selector %q, want the default", got)
	}
}
