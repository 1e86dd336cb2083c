package trafficpolicy

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// Plan is what the policy governing a backend asks of Envoy; read-only.
type Plan struct {
	Policy types.NamespacedName
	// RetryBudget goes on each of the backend's HTTP clusters; nil: none.
	RetryBudget *plan.RetryBudget
	// Session goes on each route sending to the backend; nil: none.
	Session *plan.Session
}

// Verdict is one policy judged.
type Verdict struct {
	Name   types.NamespacedName
	Policy *gwxv1a1.XBackendTrafficPolicy
	// Invalid says why the whole policy is refused; "" when it is not.
	Invalid string
	// Note is the Accepted message's account of what Envoy makes of it.
	Note    string
	Plan    Plan
	Targets []Outcome // per targetRef, in spec order
}

// Outcome is what became of one targetRef.
type Outcome struct {
	Target Target
	// NotFound or Unsupported say why the policy governs nothing there.
	NotFound, Unsupported string
	// Winner is the policy governing the target when it is another one.
	Winner *Verdict
}

// Result is every policy judged, and the policy governing each target.
type Result struct {
	Verdicts []*Verdict // sorted by namespace/name
	winners  map[Target]*Verdict
}

// PlanOf is what the policy governing t asks; ok is false when none
// does. The engine reads a Service's here; an XBackend's clusters and
// routes read theirs the same way (XBackendTarget).
func (r *Result) PlanOf(t Target) (Plan, bool) {
	if r == nil {
		return Plan{}, false
	}
	v, ok := r.winners[t]
	if !ok {
		return Plan{}, false
	}
	return v.Plan, true
}

// Governed lists the targets some policy governs, sorted.
func (r *Result) Governed() []Target {
	if r == nil {
		return nil
	}
	out := make([]Target, 0, len(r.winners))
	for t := range r.winners {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Target) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// Judge judges policies (unique by namespace/name, the last one listed
// kept) against the Services and XBackends that exist. Two valid policies
// on one target: the older (creationTimestamp, then name) governs it, the
// other is Conflicted there; an invalid policy governs nothing, so it
// takes no target from a valid one.
func Judge(policies []*gwxv1a1.XBackendTrafficPolicy, services map[types.NamespacedName]*corev1.Service, xbackends []*gwxv1a1.XBackend) *Result {
	byName := make(map[types.NamespacedName]*gwxv1a1.XBackendTrafficPolicy, len(policies))
	for _, p := range policies {
		byName[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = p
	}
	existing := make(map[Target]bool, len(xbackends))
	for _, x := range xbackends {
		existing[XBackendTarget(types.NamespacedName{Namespace: x.Namespace, Name: x.Name})] = true
	}
	res := &Result{winners: map[Target]*Verdict{}}
	for nn, p := range byName {
		res.Verdicts = append(res.Verdicts, judgePolicy(nn, p, services, existing))
	}
	slices.SortFunc(res.Verdicts, func(a, b *Verdict) int { return strings.Compare(a.Name.String(), b.Name.String()) })
	// Oldest first: each takes the targets no older valid policy took.
	byAge := slices.Clone(res.Verdicts)
	slices.SortStableFunc(byAge, func(a, b *Verdict) int {
		return a.Policy.CreationTimestamp.Time.Compare(b.Policy.CreationTimestamp.Time)
	})
	for _, v := range byAge {
		if v.Invalid != "" {
			continue
		}
		for i := range v.Targets {
			o := &v.Targets[i]
			if o.NotFound != "" || o.Unsupported != "" {
				continue
			}
			if w, taken := res.winners[o.Target]; taken && w != v {
				o.Winner = w
				continue
			}
			res.winners[o.Target] = v
		}
	}
	return res
}

// judgePolicy judges one policy's fields and targets, alone.
func judgePolicy(nn types.NamespacedName, p *gwxv1a1.XBackendTrafficPolicy, services map[types.NamespacedName]*corev1.Service, xbackends map[Target]bool) *Verdict {
	v := &Verdict{Name: nn, Policy: p, Plan: Plan{Policy: nn}}
	budget, budgetNote, budgetProblem := retryBudget(p.Spec.RetryConstraint)
	sess, sessionNote, sessionProblem := session(p.Spec.SessionPersistence)
	var problems, notes []string
	for _, s := range []string{budgetProblem, sessionProblem} {
		if s != "" {
			problems = append(problems, s)
		}
	}
	for _, s := range []string{budgetNote, sessionNote} {
		if s != "" {
			notes = append(notes, s)
		}
	}
	if len(problems) > 0 {
		v.Invalid = fmt.Sprintf("XBackendTrafficPolicy %s: %s", nn, strings.Join(problems, "; "))
	} else {
		v.Plan.RetryBudget, v.Plan.Session = budget, sess
		v.Note = strings.Join(notes, "; ")
	}
	for i, ref := range p.Spec.TargetRefs {
		t := targetOf(ref, nn.Namespace)
		o := Outcome{Target: t}
		switch {
		case t.IsService():
			if services[t.NamespacedName()] == nil {
				o.NotFound = fmt.Sprintf("XBackendTrafficPolicy %s: spec.targetRefs[%d]: Service %s does not exist", nn, i, t.NamespacedName())
			}
		case t.IsXBackend():
			if !xbackends[t] {
				o.NotFound = fmt.Sprintf("XBackendTrafficPolicy %s: spec.targetRefs[%d]: XBackend %s does not exist", nn, i, t.NamespacedName())
			}
		default:
			o.Unsupported = fmt.Sprintf("XBackendTrafficPolicy %s: spec.targetRefs[%d]: group %q kind %q: only Services and XBackends (%s) are targets", nn, i, t.Group, t.Kind, gwxv1a1.GroupName)
		}
		v.Targets = append(v.Targets, o)
	}
	return v
}
