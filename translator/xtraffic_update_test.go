package translator_test

import (
	"path/filepath"
	"testing"

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
	in, err := manifests.Read([]string{filepath.Join(goldenDir, "xtraffic-session-cookie.in.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	state := map[poolKey]poolObject{}
	eachInput(in, true, func(kind translator.Kind, o metav1.Object) {
		k := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
		state[poolKey{kind, k}] = poolObject{kind, k, o}
	})
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
