package trafficpolicy

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/plan"
)

func ptr[T any](v T) *T { return &v }

var (
	api  = types.NamespacedName{Namespace: "shop", Name: "api"}
	pay  = types.NamespacedName{Namespace: "shop", Name: "pay"}
	born = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

func policy(name string, age time.Duration, spec gwxv1a1.BackendTrafficPolicySpec) *gwxv1a1.XBackendTrafficPolicy {
	if spec.TargetRefs == nil {
		spec.TargetRefs = []gwv1.LocalPolicyTargetReference{{Kind: "Service", Name: "api"}}
	}
	return &gwxv1a1.XBackendTrafficPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, CreationTimestamp: metav1.NewTime(born.Add(age))},
		Spec:       spec,
	}
}

func services() map[types.NamespacedName]*corev1.Service {
	return map[types.NamespacedName]*corev1.Service{api: {ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api"}}}
}

func xbackends() []*gwxv1a1.XBackend {
	return []*gwxv1a1.XBackend{{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pay"}}}
}

// TestJudgeValues: the API's defaults applied, and what the API server or
// Envoy would refuse refused, naming the field and value.
func TestJudgeValues(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    gwxv1a1.BackendTrafficPolicySpec
		budget  *plan.RetryBudget
		session *plan.Session
		invalid string // a part of Verdict.Invalid; "" wants it accepted
		note    string // a part of the Note
	}{
		{name: "nothing asked", spec: gwxv1a1.BackendTrafficPolicySpec{}},
		{name: "budget defaults", spec: gwxv1a1.BackendTrafficPolicySpec{RetryConstraint: &gwxv1a1.RetryConstraint{}},
			budget: &plan.RetryBudget{Percent: 20, MinConcurrency: 10}, note: "budget.interval 10s, minRetryRate.interval 1s"},
		{name: "percent alone keeps the default minimum", spec: gwxv1a1.BackendTrafficPolicySpec{RetryConstraint: &gwxv1a1.RetryConstraint{Budget: &gwxv1a1.BudgetDetails{Percent: ptr(0)}}},
			budget: &plan.RetryBudget{Percent: 0, MinConcurrency: 10}},
		{name: "a rate without count keeps Envoy's minimum", spec: gwxv1a1.BackendTrafficPolicySpec{RetryConstraint: &gwxv1a1.RetryConstraint{MinRetryRate: &gwxv1a1.RequestRate{Interval: ptr(gwv1.Duration("5s"))}}},
			budget: &plan.RetryBudget{Percent: 20}, note: "Envoy's 3 concurrent retries"},
		{name: "explicit", spec: gwxv1a1.BackendTrafficPolicySpec{RetryConstraint: &gwxv1a1.RetryConstraint{
			Budget: &gwxv1a1.BudgetDetails{Percent: ptr(100), Interval: ptr(gwv1.Duration("1h"))}, MinRetryRate: &gwxv1a1.RequestRate{Count: ptr(1_000_000)}}},
			budget: &plan.RetryBudget{Percent: 100, MinConcurrency: 1_000_000}},
		{name: "percent above 100", spec: gwxv1a1.BackendTrafficPolicySpec{RetryConstraint: &gwxv1a1.RetryConstraint{Budget: &gwxv1a1.BudgetDetails{Percent: ptr(101)}}},
			invalid: "spec.retryConstraint.budget.percent: 101 is outside 0..100"},
		{name: "percent below 0", spec: gwxv1a1.BackendTrafficPolicySpec{RetryConstraint: &gwxv1a1.RetryConstraint{Budget: &gwxv1a1.BudgetDetails{Percent: ptr(-1)}}},
			invalid: "spec.retryConstraint.budget.percent: -1 is outside 0..100"},
		{name: "interval under a second", spec: gwxv1a1.BackendTrafficPolicySpec{RetryConstraint: &gwxv1a1.RetryConstraint{Budget: &gwxv1a1.BudgetDetails{Interval: ptr(gwv1.Duration("500ms"))}}},
			invalid: `spec.retryConstraint.budget.interval: "500ms"`},
		{name: "count 0", spec: gwxv1a1.BackendTrafficPolicySpec{RetryConstraint: &gwxv1a1.RetryConstraint{MinRetryRate: &gwxv1a1.RequestRate{Count: ptr(0)}}},
			invalid: "spec.retryConstraint.minRetryRate.count: 0 is outside 1..1000000"},
		{name: "rate interval 0s", spec: gwxv1a1.BackendTrafficPolicySpec{RetryConstraint: &gwxv1a1.RetryConstraint{MinRetryRate: &gwxv1a1.RequestRate{Count: ptr(3), Interval: ptr(gwv1.Duration("0s"))}}},
			invalid: `spec.retryConstraint.minRetryRate.interval: "0s"`},
		{name: "session defaults to a session cookie", spec: gwxv1a1.BackendTrafficPolicySpec{SessionPersistence: &gwv1.SessionPersistence{}},
			session: &plan.Session{Kind: plan.SessionCookie, Name: DefaultSessionCookie, Path: "/"}},
		{name: "permanent cookie", spec: gwxv1a1.BackendTrafficPolicySpec{SessionPersistence: &gwv1.SessionPersistence{SessionName: ptr("sid"), AbsoluteTimeout: ptr(gwv1.Duration("90m")),
			CookieConfig: &gwv1.CookieConfig{LifetimeType: ptr(gwv1.PermanentCookieLifetimeType)}}},
			session: &plan.Session{Kind: plan.SessionCookie, Name: "sid", Path: "/", TTL: 90 * time.Minute}},
		{name: "permanent without timeout", spec: gwxv1a1.BackendTrafficPolicySpec{SessionPersistence: &gwv1.SessionPersistence{CookieConfig: &gwv1.CookieConfig{LifetimeType: ptr(gwv1.PermanentCookieLifetimeType)}}},
			invalid: "Permanent needs spec.sessionPersistence.absoluteTimeout"},
		{name: "session cookie with a timeout", spec: gwxv1a1.BackendTrafficPolicySpec{SessionPersistence: &gwv1.SessionPersistence{AbsoluteTimeout: ptr(gwv1.Duration("1h"))}},
			invalid: "spec.sessionPersistence.absoluteTimeout: 1h with cookieConfig.lifetimeType Session is not supported"},
		{name: "header, named", spec: gwxv1a1.BackendTrafficPolicySpec{SessionPersistence: &gwv1.SessionPersistence{Type: ptr(gwv1.HeaderBasedSessionPersistence), SessionName: ptr("X-Session")}},
			session: &plan.Session{Kind: plan.SessionHeader, Name: "x-session"}},
		{name: "header default name", spec: gwxv1a1.BackendTrafficPolicySpec{SessionPersistence: &gwv1.SessionPersistence{Type: ptr(gwv1.HeaderBasedSessionPersistence)}},
			session: &plan.Session{Kind: plan.SessionHeader, Name: DefaultSessionHeader}},
		{name: "header with a timeout", spec: gwxv1a1.BackendTrafficPolicySpec{SessionPersistence: &gwv1.SessionPersistence{Type: ptr(gwv1.HeaderBasedSessionPersistence), AbsoluteTimeout: ptr(gwv1.Duration("1h"))}},
			invalid: "spec.sessionPersistence.absoluteTimeout: 1h is not supported with type Header"},
		{name: "header with cookieConfig", spec: gwxv1a1.BackendTrafficPolicySpec{SessionPersistence: &gwv1.SessionPersistence{Type: ptr(gwv1.HeaderBasedSessionPersistence), CookieConfig: &gwv1.CookieConfig{}}},
			invalid: "spec.sessionPersistence.cookieConfig: only for type Cookie"},
		{name: "unknown type", spec: gwxv1a1.BackendTrafficPolicySpec{SessionPersistence: &gwv1.SessionPersistence{Type: ptr(gwv1.SessionPersistenceType("URL"))}},
			invalid: `spec.sessionPersistence.type: "URL"`},
		{name: "a name that is no token", spec: gwxv1a1.BackendTrafficPolicySpec{SessionPersistence: &gwv1.SessionPersistence{SessionName: ptr("my session")}},
			invalid: `spec.sessionPersistence.sessionName: "my session" is not a valid cookie name`},
		{name: "a name too long", spec: gwxv1a1.BackendTrafficPolicySpec{SessionPersistence: &gwv1.SessionPersistence{SessionName: ptr(strings.Repeat("a", 129))}},
			invalid: "spec.sessionPersistence.sessionName: 129 bytes, more than 128"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Judge([]*gwxv1a1.XBackendTrafficPolicy{policy("p", 0, tc.spec)}, services(), nil)
			v := res.Verdicts[0]
			if tc.invalid != "" {
				if !strings.Contains(v.Invalid, tc.invalid) || !strings.HasPrefix(v.Invalid, "XBackendTrafficPolicy shop/p: ") {
					t.Fatalf("Invalid = %q, want it to name the policy and say %q", v.Invalid, tc.invalid)
				}
				if _, ok := res.PlanOf(ServiceTarget(api)); ok {
					t.Fatal("an invalid policy governs its target")
				}
				return
			}
			if v.Invalid != "" {
				t.Fatalf("refused: %s", v.Invalid)
			}
			p, ok := res.PlanOf(ServiceTarget(api))
			if !ok {
				t.Fatal("the policy governs nothing")
			}
			if !equal(p.RetryBudget, tc.budget) || !equal(p.Session, tc.session) {
				t.Fatalf("plan = %+v %+v, want %+v %+v", p.RetryBudget, p.Session, tc.budget, tc.session)
			}
			if !strings.Contains(v.Note, tc.note) {
				t.Fatalf("note %q does not say %q", v.Note, tc.note)
			}
		})
	}
}

func equal[T comparable](a, b *T) bool { return a == b || a != nil && b != nil && *a == *b }

// TestJudgeTargets: conflicts by age then name, invalid policies taking
// nothing, missing and unsupported targets, and a Service and an XBackend
// of one name being two targets.
func TestJudgeTargets(t *testing.T) {
	budget := func(percent int) gwxv1a1.BackendTrafficPolicySpec {
		return gwxv1a1.BackendTrafficPolicySpec{RetryConstraint: &gwxv1a1.RetryConstraint{Budget: &gwxv1a1.BudgetDetails{Percent: ptr(percent)}}}
	}
	withTargets := func(spec gwxv1a1.BackendTrafficPolicySpec, refs ...gwv1.LocalPolicyTargetReference) gwxv1a1.BackendTrafficPolicySpec {
		spec.TargetRefs = refs
		return spec
	}
	svcRef := func(name string) gwv1.LocalPolicyTargetReference {
		return gwv1.LocalPolicyTargetReference{Kind: "Service", Name: gwv1.ObjectName(name)}
	}
	xbRef := func(name string) gwv1.LocalPolicyTargetReference {
		return gwv1.LocalPolicyTargetReference{Group: gwxv1a1.GroupName, Kind: "XBackend", Name: gwv1.ObjectName(name)}
	}
	for _, tc := range []struct {
		name     string
		policies []*gwxv1a1.XBackendTrafficPolicy
		winners  map[Target]string // target: the governing policy's name
		outcomes map[string][]string
	}{
		{name: "the older wins", policies: []*gwxv1a1.XBackendTrafficPolicy{policy("a", time.Hour, budget(1)), policy("b", 0, budget(2))},
			winners:  map[Target]string{ServiceTarget(api): "b"},
			outcomes: map[string][]string{"a": {"winner shop/b"}, "b": {"governs"}}},
		{name: "same age: the name decides", policies: []*gwxv1a1.XBackendTrafficPolicy{policy("b", 0, budget(1)), policy("a", 0, budget(2))},
			winners:  map[Target]string{ServiceTarget(api): "a"},
			outcomes: map[string][]string{"a": {"governs"}, "b": {"winner shop/a"}}},
		{name: "an invalid older policy takes nothing", policies: []*gwxv1a1.XBackendTrafficPolicy{policy("old", 0, budget(150)), policy("new", time.Hour, budget(5))},
			winners:  map[Target]string{ServiceTarget(api): "new"},
			outcomes: map[string][]string{"old": {"governs"}, "new": {"governs"}}},
		{name: "a Service and an XBackend of one name", policies: []*gwxv1a1.XBackendTrafficPolicy{
			policy("svc", 0, withTargets(budget(1), svcRef("pay"))), policy("xb", time.Hour, withTargets(budget(2), xbRef("pay")))},
			winners:  map[Target]string{XBackendTarget(pay): "xb"},
			outcomes: map[string][]string{"svc": {"not found: spec.targetRefs[0]: Service shop/pay does not exist"}, "xb": {"governs"}}},
		{name: "missing and unsupported targets", policies: []*gwxv1a1.XBackendTrafficPolicy{
			policy("p", 0, withTargets(budget(1), svcRef("gone"), xbRef("gone"), gwv1.LocalPolicyTargetReference{Group: "apps", Kind: "Deployment", Name: "api"}, svcRef("api"), xbRef("pay")))},
			winners: map[Target]string{ServiceTarget(api): "p", XBackendTarget(pay): "p"},
			outcomes: map[string][]string{"p": {"not found: spec.targetRefs[0]: Service shop/gone does not exist", "not found: spec.targetRefs[1]: XBackend shop/gone does not exist",
				`unsupported: spec.targetRefs[2]: group "apps" kind "Deployment"`, "governs", "governs"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svcs := services()
			res := Judge(tc.policies, svcs, xbackends())
			got := map[Target]string{}
			for _, target := range res.Governed() {
				p, _ := res.PlanOf(target)
				got[target] = p.Policy.Name
			}
			if len(got) != len(tc.winners) {
				t.Fatalf("governed = %v, want %v", got, tc.winners)
			}
			for target, name := range tc.winners {
				if got[target] != name {
					t.Fatalf("%s governed by %q, want %q", target, got[target], name)
				}
			}
			for _, v := range res.Verdicts {
				want := tc.outcomes[v.Name.Name]
				if len(want) != len(v.Targets) {
					t.Fatalf("%s: %d outcomes, want %d", v.Name, len(v.Targets), len(want))
				}
				for i, o := range v.Targets {
					if s := strings.Replace(describe(o), "XBackendTrafficPolicy "+v.Name.String()+": ", "", 1); !strings.Contains(s, want[i]) {
						t.Errorf("%s targetRefs[%d]: %q, want %q", v.Name, i, s, want[i])
					}
				}
			}
		})
	}
}

func describe(o Outcome) string {
	switch {
	case o.NotFound != "":
		return "not found: " + o.NotFound
	case o.Unsupported != "":
		return "unsupported: " + o.Unsupported
	case o.Winner != nil:
		return "winner " + o.Winner.Name.String()
	}
	return "governs"
}
