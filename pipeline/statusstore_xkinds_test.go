package pipeline

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
)

func xKindStatuses(backendReason, policyReason string) translator.GatewayAPIStatuses {
	pay, budget := types.NamespacedName{Namespace: "shop", Name: "pay"}, types.NamespacedName{Namespace: "shop", Name: "budget"}
	ns := gwv1.Namespace("edge")
	ref := gwv1.ParentReference{Namespace: &ns, Name: "web"}
	cond := func(reason string) []metav1.Condition {
		status := metav1.ConditionTrue
		if reason != "Accepted" {
			status = metav1.ConditionFalse
		}
		return []metav1.Condition{{Type: "Accepted", Status: status, Reason: reason, Message: "XBackend shop/pay: " + reason}}
	}
	return translator.GatewayAPIStatuses{
		XBackends: map[types.NamespacedName]gwxv1a1.BackendStatus{pay: {Ancestors: []gwxv1a1.BackendAncestorStatus{
			{ControllerName: "example.com/other", AncestorRef: gwv1.ParentReference{Name: "theirs"}, Conditions: cond("Theirs")},
			{ControllerName: translator.DefaultControllerName, AncestorRef: ref, Conditions: cond(backendReason)},
		}}},
		XBackendTrafficPolicies: map[types.NamespacedName]gwv1.PolicyStatus{budget: {Ancestors: []gwv1.PolicyAncestorStatus{
			{ControllerName: translator.DefaultControllerName, AncestorRef: ref, Conditions: cond(policyReason)},
		}}},
	}
}

// XBackends and XBackendTrafficPolicies are logged when our conditions
// change, and shown in /debug/status, like the other kinds.
func TestStatusStoreShowsAndLogsXKinds(t *testing.T) {
	var logs bytes.Buffer
	store := NewStatusStore(slog.New(slog.NewTextHandler(&logs, nil)), "")
	store.ReportGatewayAPI(xKindStatuses("Accepted", "Accepted"))
	line := logs.String()
	for _, want := range []string{"kind=XBackend name=shop/pay", `"parent edge/web Accepted.reason"=Accepted`,
		"kind=XBackendTrafficPolicy name=shop/budget", `"ancestor edge/web Accepted.reason"=Accepted`} {
		if !strings.Contains(line, want) {
			t.Errorf("log lacks %q:\n%s", want, line)
		}
	}
	if strings.Contains(line, "Theirs") {
		t.Errorf("another controller's entry logged:\n%s", line)
	}

	logs.Reset()
	store.ReportGatewayAPI(xKindStatuses("Accepted", "Accepted"))
	if logs.Len() != 0 {
		t.Fatalf("nothing changed, yet logged:\n%s", &logs)
	}
	store.ReportGatewayAPI(xKindStatuses("Invalid", "Accepted"))
	line = logs.String()
	if !strings.Contains(line, "level=WARN") || !strings.Contains(line, `"parent edge/web Accepted.reason"=Invalid`) || strings.Count(line, "status changed") != 1 {
		t.Errorf("want one warning for the XBackend only:\n%s", line)
	}
	logs.Reset()
	store.ReportGatewayAPI(xKindStatuses("Invalid", "Conflicted"))
	line = logs.String()
	if !strings.Contains(line, "kind=XBackendTrafficPolicy") || !strings.Contains(line, `"ancestor edge/web Accepted.reason"=Conflicted`) || strings.Count(line, "status changed") != 1 {
		t.Errorf("want one line for the policy only:\n%s", line)
	}

	raw, err := store.DebugJSON()
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		XBackends               []debugRoute[gwxv1a1.BackendStatus] `json:"xBackends"`
		XBackendTrafficPolicies []debugRoute[gwv1.PolicyStatus]     `json:"xBackendTrafficPolicies"`
	}
	if err := json.Unmarshal(raw, &shown); err != nil {
		t.Fatal(err)
	}
	if len(shown.XBackends) != 1 || shown.XBackends[0].Name != "pay" || len(shown.XBackends[0].Status.Ancestors) != 2 ||
		shown.XBackends[0].Status.Ancestors[1].Conditions[0].Reason != "Invalid" ||
		len(shown.XBackendTrafficPolicies) != 1 || shown.XBackendTrafficPolicies[0].Name != "budget" ||
		shown.XBackendTrafficPolicies[0].Status.Ancestors[0].Conditions[0].Reason != "Conflicted" {
		t.Fatalf("/debug/status = %s", raw)
	}
	// The JSON field of an XBackend's entries is the API's: parents.
	if !strings.Contains(string(raw), `"parents"`) {
		t.Errorf("/debug/status shows no XBackend parents: %s", raw)
	}

	// None: empty lists, not null.
	empty, _ := NewStatusStore(nil, "").DebugJSON()
	if !strings.Contains(string(empty), `"xBackends": []`) || !strings.Contains(string(empty), `"xBackendTrafficPolicies": []`) {
		t.Errorf("/debug/status without X-kinds = %s", empty)
	}
}
