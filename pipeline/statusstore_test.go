package pipeline

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestStatusStoreLogsOnlyChanges(t *testing.T) {
	var logs bytes.Buffer
	store := NewStatusStore(slog.New(slog.NewTextHandler(&logs, nil)), "")
	pay := types.NamespacedName{Namespace: "shop", Name: "payments"}
	other := types.NamespacedName{Namespace: "ops", Name: "audit"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	store.Report(map[types.NamespacedName]gwv1.PolicyStatus{pay: acceptedStatus(t0), other: acceptedStatus(t0)})
	if n := strings.Count(logs.String(), "policy status changed"); n != 2 {
		t.Fatalf("first report: %d lines, want 2:\n%s", n, &logs)
	}

	logs.Reset()
	store.Report(map[types.NamespacedName]gwv1.PolicyStatus{pay: acceptedStatus(t0.Add(time.Hour)), other: acceptedStatus(t0)})
	if logs.Len() != 0 {
		t.Fatalf("only lastTransitionTime moved, yet logged:\n%s", &logs)
	}

	rejected := acceptedStatus(t0)
	rejected.Ancestors[0].Conditions[0] = metav1.Condition{Type: "Accepted", Status: metav1.ConditionFalse,
		Reason: "Invalid", Message: `option tlsplane.io/minimumVersion: "TLSv9"`}
	store.Report(map[types.NamespacedName]gwv1.PolicyStatus{pay: rejected})
	line := logs.String()
	for _, want := range []string{"level=WARN", "policy=shop/payments", "Accepted.status=False", "Accepted.reason=Invalid", "TLSv9", `msg="policy removed" policy=ops/audit`} {
		if !strings.Contains(line, want) {
			t.Errorf("log lacks %q:\n%s", want, line)
		}
	}
	if n := strings.Count(line, "policy status changed"); n != 1 {
		t.Errorf("%d change lines, want 1:\n%s", n, line)
	}

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
	if len(shown.Policies) != 1 || shown.Policies[0].Name != "payments" ||
		shown.Policies[0].Status.Ancestors[0].Conditions[0].Reason != "Invalid" {
		t.Fatalf("/debug/status = %s", raw)
	}
}
