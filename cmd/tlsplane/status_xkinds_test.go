package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/pipeline"
	"github.com/tlsplane/tlsplane/translator"
)

// xKindsDebugStatus is /debug/status as the status store writes it, with
// an XBackend reached through two Gateways and a traffic policy.
func xKindsDebugStatus(t *testing.T) string {
	t.Helper()
	edge := gwv1.Namespace("edge")
	gw := func(name string) gwv1.ParentReference {
		return gwv1.ParentReference{Namespace: &edge, Name: gwv1.ObjectName(name)}
	}
	t0 := metav1.Unix(1767323000, 0)
	store := pipeline.NewStatusStore(nil, "")
	store.ReportGatewayAPI(translator.GatewayAPIStatuses{
		XBackends: map[types.NamespacedName]gwxv1a1.BackendStatus{
			{Namespace: "shop", Name: "pay"}: {Ancestors: []gwxv1a1.BackendAncestorStatus{
				{ControllerName: translator.DefaultControllerName, AncestorRef: gw("web"), Conditions: []metav1.Condition{
					{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", Message: "XBackend shop/pay: TLS ServerOnly to api.pay.example:443", LastTransitionTime: t0},
					{Type: "ResolvedRefs", Status: metav1.ConditionTrue, Reason: "ResolvedRefs", LastTransitionTime: t0},
				}},
				{ControllerName: translator.DefaultControllerName, AncestorRef: gw("api"), Conditions: []metav1.Condition{
					{Type: "Accepted", Status: metav1.ConditionFalse, Reason: "NoValidCACertificate", Message: "XBackend shop/pay: spec.tls.validation.caCertificateRefs[0]:\nConfigMap shop/ca does not exist", LastTransitionTime: t0},
				}},
			}},
			{Namespace: "shop", Name: "search"}: {},
		},
		XBackendTrafficPolicies: map[types.NamespacedName]gwv1.PolicyStatus{
			{Namespace: "shop", Name: "budget"}: {Ancestors: []gwv1.PolicyAncestorStatus{
				{ControllerName: translator.DefaultControllerName, AncestorRef: gw("web"), Conditions: []metav1.Condition{
					{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: t0},
				}},
			}},
		},
	})
	raw, err := store.DebugJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func TestStatusXKinds(t *testing.T) {
	addr := adminServer(t, xKindsDebugStatus(t))
	var out bytes.Buffer
	if err := runStatus([]string{"xbackend", "shop/pay", "--admin", addr}, &out); err != nil {
		t.Fatal(err)
	}
	want := `XBackend shop/pay

PARENT            CONTROLLER              CONDITION     STATUS  REASON                MESSAGE
Gateway edge/web  tlsplane.io/controller  Accepted      True    Accepted              XBackend shop/pay: TLS ServerOnly to api.pay.example:443
                                          ResolvedRefs  True    ResolvedRefs          -
Gateway edge/api  tlsplane.io/controller  Accepted      False   NoValidCACertificate  XBackend shop/pay: spec.tls.validation.caCertificateRefs[0]: ConfigMap shop/ca does not exist
`
	if out.String() != want {
		t.Errorf("status xbackend:\n%s\nwant:\n%s", &out, want)
	}

	out.Reset()
	if err := runStatus([]string{"xbackendtrafficpolicy", "shop/budget", "--admin", addr}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "XBackendTrafficPolicy shop/budget\n\nANCESTOR") || !strings.Contains(out.String(), "Gateway edge/web") {
		t.Errorf("status xbackendtrafficpolicy:\n%s", &out)
	}

	out.Reset()
	if err := runStatus([]string{"xbackend", "shop/search", "--admin", addr}, &out); err != nil || !strings.Contains(out.String(), "(no status yet)") {
		t.Errorf("an XBackend without entries: %v\n%s", err, &out)
	}

	out.Reset()
	if err := runStatus([]string{"xbackend", "shop/pay", "--admin", addr, "-o", "json"}, &out); err != nil {
		t.Fatal(err)
	}
	var view xObjectView
	if err := json.Unmarshal(out.Bytes(), &view); err != nil {
		t.Fatal(err)
	}
	if view.Kind != "XBackend" || len(view.Entries) != 2 || view.Entries[1].Conditions[0].Reason != "NoValidCACertificate" {
		t.Errorf("-o json:\n%s", &out)
	}

	for args, want := range map[[2]string]string{
		{"xbackend", "shop/nope"}:             `XBackend shop/nope: no status; namespace "shop" has pay, search`,
		{"xbackend", "bank/ledger"}:           `XBackend bank/ledger: no status; tlsplane reports on no XBackend in namespace "bank" (an XBackend gets one when a route of a Gateway of ours references it)`,
		{"xbackendtrafficpolicy", "shop/pay"}: `XBackendTrafficPolicy shop/pay: no status; namespace "shop" has budget`,
		{"xbackend", "pay"}:                   `xbackend "pay": want NAMESPACE/NAME`,
	} {
		err := runStatus([]string{args[0], args[1], "--admin", addr}, &out)
		if err == nil || err.Error() != want {
			t.Errorf("%s %s: %v, want %q", args[0], args[1], err, want)
		}
	}
	if err := runStatus([]string{"xbackend", "--admin", addr}, &out); err == nil || !strings.Contains(err.Error(), "want one NAMESPACE/NAME") {
		t.Errorf("xbackend without a name: %v", err)
	}
}
