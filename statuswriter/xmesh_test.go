package statuswriter

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/tlsplane/tlsplane/translator"
)

func meshStatus(reason string) gwxv1a1.MeshStatus {
	return gwxv1a1.MeshStatus{Conditions: accepted(reason), SupportedFeatures: []gwv1.SupportedFeature{{Name: "Mesh"}}}
}

// TestWriterWritesXMeshStatuses: the status of an XMesh of ours
// (cluster-scoped) is written whole once leading, not again while it
// stays the same, rewritten when it changes; an XMesh with no desired
// status (another controller's) is never written.
func TestWriterWritesXMeshStatuses(t *testing.T) {
	ctx := context.Background()
	c := gwfake.NewSimpleClientset()
	for _, name := range []string{"ours", "theirs"} {
		if _, err := c.ExperimentalV1alpha1().XMeshes().Create(ctx, &gwxv1a1.XMesh{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.ClearActions()
	w, err := New(Options{Gateway: c, Controller: me, Cache: apiCache{c}})
	if err != nil {
		t.Fatal(err)
	}
	statuses := func(reason string) translator.GatewayAPIStatuses {
		return translator.GatewayAPIStatuses{XMeshes: map[string]gwxv1a1.MeshStatus{"ours": meshStatus(reason)}}
	}
	live := func(name string) gwxv1a1.MeshStatus {
		m, ok := apiCache{c}.XMesh(name)
		if !ok {
			t.Fatalf("XMesh %s is gone", name)
		}
		return m.Status
	}

	w.ReportGatewayAPI(statuses("Accepted"))
	time.Sleep(100 * time.Millisecond)
	if n := statusUpdates(c); len(n) != 0 {
		t.Fatalf("written before a term: %v", n)
	}
	runWriter(t, w)
	eventually(t, "XMesh ours written", func() bool { return equality.Semantic.DeepEqual(live("ours"), meshStatus("Accepted")) })
	if n := statusUpdates(c); n["xmeshes"] != 1 || len(n) != 1 {
		t.Errorf("status updates = %v, want one of xmeshes", n)
	}

	c.ClearActions()
	w.ReportGatewayAPI(statuses("Accepted"))
	time.Sleep(200 * time.Millisecond)
	if n := statusUpdates(c); len(n) != 0 {
		t.Errorf("an unchanged XMesh status rewritten: %v", n)
	}

	w.ReportGatewayAPI(statuses("InvalidParameters"))
	eventually(t, "XMesh ours rewritten", func() bool { return equality.Semantic.DeepEqual(live("ours"), meshStatus("InvalidParameters")) })
	if st := live("theirs"); len(st.Conditions)+len(st.SupportedFeatures) != 0 {
		t.Errorf("another controller's XMesh got a status: %+v", st)
	}
}
