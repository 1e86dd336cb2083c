package informers

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/tlsplane/tlsplane/translator"
)

// TestSourceReadsXMeshes: with only BackendTLSPolicy's and XMesh's CRDs,
// the cluster-scoped XMesh is read (no namespace, its last-applied copy
// dropped) and looked up by name; a spec edit is a change of its kind,
// keyed by name alone; a status-only update signals no translation and
// is handed to the status writer's callback.
func TestSourceReadsXMeshes(t *testing.T) {
	ctx := context.Background()
	m := &gwxv1a1.XMesh{ObjectMeta: metav1.ObjectMeta{Name: "mesh", Annotations: map[string]string{lastApplied: "{copy}"}},
		Spec: gwxv1a1.MeshSpec{ControllerName: translator.DefaultControllerName}}
	gwc := gwfake.NewSimpleClientset()
	if _, err := gwc.ExperimentalV1alpha1().XMeshes().Create(ctx, m, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	src, signals := runSource(t, kubefake.NewClientset(), gwc, map[string][]string{
		"gateway.networking.k8s.io/v1": {"backendtlspolicies"},
		xGroupVersion:                  {"xmeshes"},
	})
	var (
		mu    sync.Mutex
		notes []statusNote
	)
	src.NotifyStatusChanges(func(kind string, nn types.NamespacedName, statusOnly bool) {
		mu.Lock()
		defer mu.Unlock()
		notes = append(notes, statusNote{kind, nn, statusOnly})
	})
	in := src.Inputs()
	if len(in.XMeshes) != 1 || in.XMeshes[0].Name != "mesh" || in.XMeshes[0].Namespace != "" {
		t.Fatalf("inputs: XMeshes %v, want mesh alone", in.XMeshes)
	}
	if in.XMeshes[0].Annotations[lastApplied] != "" {
		t.Error("the XMesh kept its last-applied copy: the transform did not run")
	}
	if got, ok := src.XMesh("mesh"); !ok || got.Spec.ControllerName != translator.DefaultControllerName {
		t.Errorf("XMesh lookup = %v, %v", got, ok)
	}
	if _, ok := src.XMesh("other"); ok {
		t.Error("XMesh lookup of a missing name found one")
	}
	src.Changes() // the first call is a resync

	key := types.NamespacedName{Name: "mesh"}
	m.Spec.ControllerName = "example.com/mesh"
	if _, err := gwc.ExperimentalV1alpha1().XMeshes().Update(ctx, m, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := waitChanges(t, src, signals, 1); len(got) != 1 || got[0].Kind != translator.KindXMesh || got[0].Key != key {
		t.Fatalf("changes %+v, want XMesh mesh", got)
	}

	before := signals.Load()
	m.Status.Conditions = []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: metav1.Now()}}
	if _, err := gwc.ExperimentalV1alpha1().XMeshes().UpdateStatus(ctx, m, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := statusNote{kindXMesh, key, true}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		got := append([]statusNote(nil), notes...)
		mu.Unlock()
		if len(got) > 0 && got[len(got)-1] == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status notes %+v, want one ending with %+v", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := signals.Load(); got != before {
		t.Errorf("%d change signals after a status-only update, want none", got-before)
	}
}
