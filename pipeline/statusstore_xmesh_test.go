package pipeline

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
)

func xMeshStatuses(reason string) translator.GatewayAPIStatuses {
	status := metav1.ConditionTrue
	if reason != "Accepted" {
		status = metav1.ConditionFalse
	}
	return translator.GatewayAPIStatuses{XMeshes: map[string]gwxv1a1.MeshStatus{"mesh": {
		Conditions:        []metav1.Condition{{Type: "Accepted", Status: status, Reason: reason, Message: "XMesh mesh: " + reason}},
		SupportedFeatures: []gwv1.SupportedFeature{{Name: "Mesh"}},
	}}}
}

// An XMesh is logged when its conditions change, and shown in
// /debug/status under xMeshes, by name.
func TestStatusStoreShowsAndLogsXMeshes(t *testing.T) {
	var logs bytes.Buffer
	store := NewStatusStore(slog.New(slog.NewTextHandler(&logs, nil)), "")
	store.ReportGatewayAPI(xMeshStatuses("Accepted"))
	if line := logs.String(); !strings.Contains(line, "kind=XMesh name=mesh") || !strings.Contains(line, "Accepted.reason=Accepted") {
		t.Errorf("log lacks XMesh mesh Accepted:\n%s", line)
	}
	logs.Reset()
	store.ReportGatewayAPI(xMeshStatuses("Accepted"))
	if logs.Len() != 0 {
		t.Fatalf("nothing changed, yet logged:\n%s", &logs)
	}
	store.ReportGatewayAPI(xMeshStatuses("InvalidParameters"))
	if line := logs.String(); !strings.Contains(line, "kind=XMesh name=mesh") || !strings.Contains(line, "Accepted.reason=InvalidParameters") {
		t.Errorf("log lacks XMesh mesh InvalidParameters:\n%s", line)
	}

	raw, err := store.DebugJSON()
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		XMeshes []debugXMesh `json:"xMeshes"`
	}
	if err := json.Unmarshal(raw, &shown); err != nil {
		t.Fatal(err)
	}
	if len(shown.XMeshes) != 1 || shown.XMeshes[0].Name != "mesh" || shown.XMeshes[0].Status.Conditions[0].Reason != "InvalidParameters" ||
		len(shown.XMeshes[0].Status.SupportedFeatures) != 1 {
		t.Errorf("/debug/status xMeshes = %+v, want mesh InvalidParameters with its features", shown.XMeshes)
	}
}
