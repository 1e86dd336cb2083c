package pipeline

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestStatusStoreShowsGovernedClusters(t *testing.T) {
	store := NewStatusStore(nil, "")
	pay := types.NamespacedName{Namespace: "shop", Name: "payments"}
	idle := types.NamespacedName{Namespace: "shop", Name: "idle"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store.Report(map[types.NamespacedName]gwv1.PolicyStatus{pay: acceptedStatus(t0), idle: acceptedStatus(t0)})
	store.ShowClusters(func() map[types.NamespacedName][]string {
		return map[types.NamespacedName][]string{pay: {"shop/payments/443", "shop/payments/8443"}}
	})
	raw, err := store.DebugJSON()
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		Policies []debugPolicy `json:"policies"`
	}
	if err := json.Unmarshal(raw, &shown); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, p := range shown.Policies {
		got[p.Name] = p.Clusters
	}
	if !slices.Equal(got["payments"], []string{"shop/payments/443", "shop/payments/8443"}) || got["idle"] != nil {
		t.Errorf("clusters = %v, want payments' two and none for idle\n%s", got, raw)
	}
}
