package pipeline

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestRejectionsKeepTheLatestPerFleetAndType(t *testing.T) {
	p, err := New(Options{Source: newFakeSource(), Publisher: &recorder{}, Sink: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	pay := types.NamespacedName{Namespace: "shop", Name: "payments"}
	cds := "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	p.RecordNACK(Rejection{Fleet: "edge", TypeURL: cds, Version: "v1", Message: "old"})
	p.RecordNACK(Rejection{Fleet: "edge", TypeURL: cds, Version: "v2", Message: "bad cipher", Policies: []types.NamespacedName{pay}})
	p.RecordNACK(Rejection{Fleet: "canary", TypeURL: cds, Version: "v2", Message: "bad cipher"})

	got := p.Rejections()
	if len(got) != 2 || got[0].Fleet != "canary" || got[1].Version != "v2" || got[1].Policies[0] != pay {
		t.Fatalf("Rejections = %+v, want canary then edge's v2", got)
	}

	store := NewStatusStore(nil, "")
	store.ShowRejections(p.Rejections)
	raw, err := store.DebugJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"message": "bad cipher"`) || strings.Contains(string(raw), `"old"`) {
		t.Fatalf("/debug/status rejections:\n%s", raw)
	}
}
