package pipeline

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
)

// policyRecorder is a refusingRecorder that keeps the policy statuses
// reported.
type policyRecorder struct {
	*refusingRecorder
	policies []map[types.NamespacedName]gwv1.PolicyStatus
}

func (r *policyRecorder) Report(s map[types.NamespacedName]gwv1.PolicyStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.policies = append(r.policies, s)
}

// TestPipelineReportsAnEnvoyBuildRefusalOnThePolicy: a cluster withheld
// from a fleet whose Envoy build refuses its TLS parameters is reported on
// its BackendTLSPolicy and its XBackend (DataPlaneAccepted=False,
// EnvoyBuildRefuses, the publisher's message naming fleet, build, value
// and option); the fleet's Gateway, which serves everything else, stays
// Programmed.
func TestPipelineReportsAnEnvoyBuildRefusalOnThePolicy(t *testing.T) {
	pay := types.NamespacedName{Namespace: "shop", Name: "payments"}
	xpay := types.NamespacedName{Namespace: "shop", Name: "pay"}
	refusal := translator.FleetRefusal{Fleet: "edge/web", Reason: translator.ReasonEnvoyBuildRefuses,
		Objects: []translator.ObjectRef{{Kind: translator.KindBackendTLSPolicy, Name: pay}, {Kind: translator.KindXBackend, Name: xpay}},
		Message: `fleet edge/web: Envoy 1.40.0 BoringSSL-FIPS does not accept curve "X25519" (option tlsplane.io/ecdhCurves); cluster shop/payments/8443 is not served to the fleet`}
	rec := &policyRecorder{refusingRecorder: &refusingRecorder{gatewayRecorder: &gatewayRecorder{recorder: &recorder{}}, refusals: []translator.FleetRefusal{refusal}}}
	translate := func(in translator.Inputs, prev translator.PreviousStatus, now time.Time, o translator.Options) translator.Output {
		out := rec.translate(in, prev, now, o)
		out.Statuses = map[types.NamespacedName]gwv1.PolicyStatus{pay: acceptedStatus(now)}
		out.GatewayAPI = gatewayStatuses("Accepted")
		out.GatewayAPI.XBackends = map[types.NamespacedName]gwxv1a1.BackendStatus{xpay: {Ancestors: []gwxv1a1.BackendAncestorStatus{
			{ControllerName: translator.DefaultControllerName, AncestorRef: gwv1.ParentReference{Name: "web"}}}}}
		return out
	}
	p, err := New(Options{Source: newFakeSource(), Publisher: rec, Sink: rec, Translate: translate})
	if err != nil {
		t.Fatal(err)
	}
	p.sync()
	if len(rec.policies) != 1 || len(rec.got) != 1 {
		t.Fatalf("reported %d policy and %d Gateway API statuses, want 1 each", len(rec.policies), len(rec.got))
	}
	check := func(who string, conds []metav1.Condition) {
		t.Helper()
		c := meta.FindStatusCondition(conds, ConditionDataPlaneAccepted)
		if c == nil || c.Status != "False" || c.Reason != ReasonEnvoyBuildRefuses || c.Message != refusal.Message {
			t.Errorf("%s %s = %+v, want False %s %q", who, ConditionDataPlaneAccepted, c, ReasonEnvoyBuildRefuses, refusal.Message)
		}
	}
	check("BackendTLSPolicy shop/payments", rec.policies[0][pay].Ancestors[0].Conditions)
	check("XBackend shop/pay", rec.got[0].XBackends[xpay].Ancestors[0].Conditions)
	if c := meta.FindStatusCondition(rec.got[0].Gateways[web].Conditions, "Programmed"); c == nil || c.Status != "True" || strings.Contains(c.Message, "X25519") {
		t.Errorf("Gateway edge/web Programmed = %+v, want True: only one cluster is withheld", c)
	}
}
