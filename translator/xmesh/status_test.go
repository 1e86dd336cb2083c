package xmesh

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/mesh"
)

const ours gwv1.GatewayController = "tlsplane.io/gateway-controller"

func xmesh(name string, controller gwv1.GatewayController, generation int64, params *gwv1.ParametersReference) *gwxv1a1.XMesh {
	return &gwxv1a1.XMesh{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: generation},
		Spec: gwxv1a1.MeshSpec{ControllerName: controller, ParametersRef: params}}
}

func TestStatuses(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 4, 1, 0, 0, 0, time.UTC))
	ns := gwv1.Namespace("mesh-config")
	for _, c := range []struct {
		name   string
		meshes []*gwxv1a1.XMesh
		// want: per XMesh of ours, the Accepted condition's status and
		// reason, and words its message must hold.
		want map[string][]string
	}{
		{"none", nil, map[string][]string{}},
		{"ours accepted", []*gwxv1a1.XMesh{xmesh("m", ours, 3, nil)}, map[string][]string{"m": {"True", "Accepted"}}},
		{"another controller's: no status", []*gwxv1a1.XMesh{xmesh("istio", "istio.io/mesh-controller", 1, nil)}, map[string][]string{}},
		{"parameters refused", []*gwxv1a1.XMesh{xmesh("p", ours, 2, &gwv1.ParametersReference{Group: "example.com", Kind: "MeshConfig", Name: "cfg", Namespace: &ns})},
			map[string][]string{"p": {"False", "InvalidParameters", "XMesh p", "spec.parametersRef", `"example.com/MeshConfig mesh-config/cfg"`}}},
		{"core parameters", []*gwxv1a1.XMesh{xmesh("c", ours, 1, &gwv1.ParametersReference{Kind: "ConfigMap", Name: "cm"})},
			map[string][]string{"c": {"False", "InvalidParameters", `"core/ConfigMap cm"`}}},
		{"last of a name wins", []*gwxv1a1.XMesh{xmesh("m", ours, 1, nil), xmesh("m", "other.io/x", 2, nil)}, map[string][]string{}},
		{"mixed", []*gwxv1a1.XMesh{xmesh("a", ours, 1, nil), xmesh("b", "other.io/x", 1, nil), xmesh("c", ours, 1, &gwv1.ParametersReference{Kind: "ConfigMap", Name: "cm"})},
			map[string][]string{"a": {"True", "Accepted"}, "c": {"False", "InvalidParameters"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Statuses(c.meshes, ours, now)
			if len(got) != len(c.want) {
				t.Fatalf("statuses of %v, want of %v", keys(got), keys(c.want))
			}
			for name, want := range c.want {
				st, ok := got[name]
				if !ok {
					t.Fatalf("no status for XMesh %s", name)
				}
				if len(st.Conditions) != 1 {
					t.Fatalf("XMesh %s: conditions %+v, want one", name, st.Conditions)
				}
				cond := st.Conditions[0]
				if cond.Type != "Accepted" || string(cond.Status) != want[0] || cond.Reason != want[1] {
					t.Errorf("XMesh %s: %s=%s %s, want Accepted=%s %s", name, cond.Type, cond.Status, cond.Reason, want[0], want[1])
				}
				for _, word := range want[2:] {
					if !strings.Contains(cond.Message, word) {
						t.Errorf("XMesh %s: message %q lacks %q", name, cond.Message, word)
					}
				}
				var m *gwxv1a1.XMesh
				for _, x := range c.meshes {
					if x.Name == name {
						m = x
					}
				}
				if cond.ObservedGeneration != m.Generation || !cond.LastTransitionTime.Equal(&now) {
					t.Errorf("XMesh %s: observedGeneration %d at %v, want %d at %v", name, cond.ObservedGeneration, cond.LastTransitionTime, m.Generation, now)
				}
				if !reflect.DeepEqual(st.SupportedFeatures, wantFeatures()) {
					t.Errorf("XMesh %s: supportedFeatures %v, want %v", name, st.SupportedFeatures, wantFeatures())
				}
			}
		})
	}
}

// TestStatusKeepsTransitionTime: an unchanged condition keeps its
// lastTransitionTime, so a restart writes nothing new.
func TestStatusKeepsTransitionTime(t *testing.T) {
	before := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(before.Add(time.Hour))
	m := xmesh("m", ours, 4, nil)
	m.Status = Status(m, before)
	if got := Status(m, now).Conditions[0].LastTransitionTime; !got.Equal(&before) {
		t.Errorf("accepted again at %v: lastTransitionTime %v, want %v kept", now, got, before)
	}
	m.Spec.ParametersRef = &gwv1.ParametersReference{Kind: "ConfigMap", Name: "cm"}
	if got := Status(m, now).Conditions[0].LastTransitionTime; !got.Equal(&now) {
		t.Errorf("refused at %v: lastTransitionTime %v, want %v", now, got, now)
	}
}

// wantFeatures is mesh.SupportedFeatures sorted, written out apart from
// the code under test.
func wantFeatures() []gwv1.SupportedFeature {
	var out []gwv1.SupportedFeature
	for _, f := range mesh.SupportedFeatures {
		out = append(out, gwv1.SupportedFeature{Name: f})
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Name < out[j-1].Name; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	if len(out) == 0 {
		panic("mesh.SupportedFeatures is empty: nothing to compare")
	}
	return out
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
