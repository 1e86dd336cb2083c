package translator_test

import (
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// TestUpdateFollowsTrafficPolicies: each XBackendTrafficPolicy change
// (session kind, budget, target, age, deletion, re-creation) and each
// change of a Service it targets, applied by Update, gives what Translate
// gives for the same objects: budgets on clusters, sessions on routes,
// statuses.
func TestUpdateFollowsTrafficPolicies(t *testing.T) {
	in, err := manifests.Unadmitted.Read([]string{filepath.Join(goldenDir, "xtraffic-session-cookie.in.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	state := objectsOf(in)
	sticky := state[poolKey{translator.KindXBackendTrafficPolicy, types.NamespacedName{Namespace: "shop", Name: "sticky"}}].obj.(*gwxv1a1.XBackendTrafficPolicy)
	web := state[poolKey{translator.KindService, types.NamespacedName{Namespace: "shop", Name: "web"}}].obj

	header := sticky.DeepCopy()
	kind := gwv1.HeaderBasedSessionPersistence
	header.Spec.SessionPersistence = &gwv1.SessionPersistence{Type: &kind}
	budget := header.DeepCopy()
	percent := 40
	budget.Spec.RetryConstraint = &gwxv1a1.RetryConstraint{Budget: &gwxv1a1.BudgetDetails{Percent: &percent}}
	onWeb := budget.DeepCopy()
	onWeb.Spec.TargetRefs = []gwv1.LocalPolicyTargetReference{{Kind: "Service", Name: "web"}}
	younger := onWeb.DeepCopy()
	younger.CreationTimestamp = metav1.NewTime(younger.CreationTimestamp.AddDate(0, 0, 1))
	stickyKey := types.NamespacedName{Namespace: "shop", Name: "sticky"}
	webKey := types.NamespacedName{Namespace: "shop", Name: "web"}

	tr := translator.New()
	tr.Translate(inputsOf(state), nil, fuzzNow, translator.Options{})
	for _, step := range []struct {
		name   string
		change translator.Change
	}{
		{"cookie to header", translator.Change{Kind: translator.KindXBackendTrafficPolicy, Key: stickyKey, Object: header}},
		{"a budget added", translator.Change{Kind: translator.KindXBackendTrafficPolicy, Key: stickyKey, Object: budget}},
		{"retargeted to web", translator.Change{Kind: translator.KindXBackendTrafficPolicy, Key: stickyKey, Object: onWeb}},
		{"younger than the other policy on web", translator.Change{Kind: translator.KindXBackendTrafficPolicy, Key: stickyKey, Object: younger}},
		{"web deleted", translator.Change{Kind: translator.KindService, Key: webKey}},
		{"web back", translator.Change{Kind: translator.KindService, Key: webKey, Object: web}},
		{"policy deleted", translator.Change{Kind: translator.KindXBackendTrafficPolicy, Key: stickyKey}},
		{"policy back", translator.Change{Kind: translator.KindXBackendTrafficPolicy, Key: stickyKey, Object: sticky}},
	} {
		k := poolKey{step.change.Kind, step.change.Key}
		if step.change.Object == nil {
			delete(state, k)
		} else {
			state[k] = poolObject{step.change.Kind, step.change.Key, step.change.Object}
		}
		got, ok := tr.Update([]translator.Change{step.change}, nil, fuzzNow, translator.Options{})
		if !ok {
			t.Fatalf("%s: Update refused the change", step.name)
		}
		want := translator.Translate(inputsOf(state), nil, fuzzNow, translator.Options{})
		if diff := fuzzOutputDifference(want, got); diff != "" {
			t.Fatalf("%s: Update differs from Translate: %s", step.name, diff)
		}
	}
}

// TestUpdateFollowsTrafficPoliciesOnXBackends: a budget change of a policy
// on an XBackend re-emits the XBackend's HTTP and gRPC clusters (named in
// Changed, the raw one kept); the XBackend's port change moves the
// routes' sessions to its new cluster names; its deletion and re-creation
// turn its policy TargetNotFound and back; an XBackend created for a
// policy's missing target is governed by it. After each, Update gives
// what Translate gives.
func TestUpdateFollowsTrafficPoliciesOnXBackends(t *testing.T) {
	in, err := manifests.Unadmitted.Read([]string{filepath.Join(goldenDir, "xtraffic-xbackend.in.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	state := objectsOf(in)
	policyKey := types.NamespacedName{Namespace: "shop", Name: "pay-traffic"}
	payKey := types.NamespacedName{Namespace: "shop", Name: "pay"}
	ghostKey := types.NamespacedName{Namespace: "shop", Name: "ghost"}
	policy := state[poolKey{translator.KindXBackendTrafficPolicy, policyKey}].obj.(*gwxv1a1.XBackendTrafficPolicy)
	pay := state[poolKey{translator.KindXBackend, payKey}].obj.(*gwxv1a1.XBackend)

	wider := policy.DeepCopy()
	percent := 60
	wider.Spec.RetryConstraint.Budget.Percent = &percent
	moved := pay.DeepCopy()
	moved.Spec.Port.Port = 8443
	ghost := pay.DeepCopy()
	ghost.Name = "ghost"

	tr := translator.New()
	tr.Translate(inputsOf(state), nil, fuzzNow, translator.Options{})
	for _, step := range []struct {
		name   string
		change translator.Change
		check  func(t *testing.T, out translator.Output)
	}{
		{"budget 30% to 60%", translator.Change{Kind: translator.KindXBackendTrafficPolicy, Key: policyKey, Object: wider}, func(t *testing.T, out translator.Output) {
			if got := budgetPercent(out, "XBackend/shop/pay/443/grpc"); got != 60 {
				t.Errorf("XBackend/shop/pay/443/grpc budget %v%%, want 60%%", got)
			}
			changed := map[string]bool{}
			if out.Changed != nil {
				for _, c := range out.Changed.Clusters {
					changed[c] = true
				}
			}
			if !changed["XBackend/shop/pay/443"] || !changed["XBackend/shop/pay/443/grpc"] || changed["XBackend/shop/pay/443/tcp"] {
				t.Errorf("Changed.Clusters %v: want the HTTP and gRPC clusters of XBackend shop/pay, not its raw one", out.Changed)
			}
		}},
		{"port 443 to 8443", translator.Change{Kind: translator.KindXBackend, Key: payKey, Object: moved}, func(t *testing.T, out translator.Output) {
			if got := budgetPercent(out, "XBackend/shop/pay/8443/grpc"); got != 60 {
				t.Errorf("XBackend/shop/pay/8443/grpc budget %v%%, want 60%%", got)
			}
		}},
		{"XBackend deleted", translator.Change{Kind: translator.KindXBackend, Key: payKey}, func(t *testing.T, out translator.Output) {
			wantAccepted(t, out, policyKey, string(gwv1.PolicyReasonTargetNotFound))
		}},
		{"XBackend back", translator.Change{Kind: translator.KindXBackend, Key: payKey, Object: pay}, func(t *testing.T, out translator.Output) {
			wantAccepted(t, out, policyKey, string(gwv1.PolicyReasonAccepted))
		}},
		{"the missing target created", translator.Change{Kind: translator.KindXBackend, Key: ghostKey, Object: ghost}, func(t *testing.T, out translator.Output) {
			wantAccepted(t, out, types.NamespacedName{Namespace: "shop", Name: "ghost-traffic"}, string(gwv1.PolicyReasonAccepted))
			if got := budgetPercent(out, "XBackend/shop/ghost/443"); got != 40 {
				t.Errorf("XBackend/shop/ghost/443 budget %v%%, want 40%%", got)
			}
		}},
		{"policy deleted", translator.Change{Kind: translator.KindXBackendTrafficPolicy, Key: policyKey}, func(t *testing.T, out translator.Output) {
			if got := budgetPercent(out, "XBackend/shop/pay/443"); got != 0 {
				t.Errorf("XBackend/shop/pay/443 budget %v%% without a policy", got)
			}
		}},
	} {
		k := poolKey{step.change.Kind, step.change.Key}
		if step.change.Object == nil {
			delete(state, k)
		} else {
			state[k] = poolObject{step.change.Kind, step.change.Key, step.change.Object}
		}
		got, ok := tr.Update([]translator.Change{step.change}, nil, fuzzNow, translator.Options{})
		if !ok {
			t.Fatalf("%s: Update refused the change", step.name)
		}
		want := translator.Translate(inputsOf(state), nil, fuzzNow, translator.Options{})
		if diff := fuzzOutputDifference(want, got); diff != "" {
			t.Fatalf("%s: Update differs from Translate: %s", step.name, diff)
		}
		step.check(t, got)
	}
}

// budgetPercent is the retry budget's percent on the cluster named, 0
// without one (or without the cluster).
func budgetPercent(out translator.Output, cluster string) float64 {
	for _, c := range out.Clusters {
		if c.Name != cluster {
			continue
		}
		for _, th := range c.GetCircuitBreakers().GetThresholds() {
			if b := th.GetRetryBudget(); b != nil {
				return b.GetBudgetPercent().GetValue()
			}
		}
	}
	return 0
}

// wantAccepted fails unless the policy's ancestors of ours all have
// Accepted with reason.
func wantAccepted(t *testing.T, out translator.Output, policy types.NamespacedName, reason string) {
	t.Helper()
	st, ok := out.GatewayAPI.XBackendTrafficPolicies[policy]
	if !ok || len(st.Ancestors) == 0 {
		t.Fatalf("XBackendTrafficPolicy %s: no status", policy)
	}
	for _, a := range st.Ancestors {
		if c := meta.FindStatusCondition(a.Conditions, string(gwv1.PolicyConditionAccepted)); c == nil || c.Reason != reason {
			t.Errorf("XBackendTrafficPolicy %s ancestor %s: Accepted %+v, want reason %s", policy, a.AncestorRef.Name, c, reason)
		}
	}
}
