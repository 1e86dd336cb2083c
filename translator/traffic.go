package translator

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/trafficpolicy"
)

// traffic is the last call's XBackendTrafficPolicies judged, with what
// the emitter reads of them: the routes' sessions by cluster name.
type traffic struct {
	judged *trafficpolicy.Result
	// sessions is shared, read-only, by every route table emitted.
	sessions map[string]*plan.Session
}

// judgeTraffic judges the XBackendTrafficPolicies, for this call's Service
// ports and route tables.
func judgeTraffic(in Inputs, ix *input.Index) traffic {
	if len(in.XBackendTrafficPolicies) == 0 {
		return traffic{} // the common case costs nothing
	}
	res := trafficpolicy.Judge(in.XBackendTrafficPolicies, ix.Services, in.XBackends)
	var sessions map[string]*plan.Session
	for _, t := range res.Governed() {
		p, _ := res.PlanOf(t)
		if p.Session == nil {
			continue
		}
		if sessions == nil {
			sessions = map[string]*plan.Session{}
		}
		for _, name := range clustersOf(t, ix) {
			sessions[name] = p.Session
		}
	}
	return traffic{judged: res, sessions: sessions}
}

// clustersOf names the clusters of t's that routes send HTTP to: a
// Service's TCP ports, each as HTTPRoutes and GRPCRoutes reach it. An
// XBackend's come with the XBackend's cluster names (plan/names.go).
func clustersOf(t trafficpolicy.Target, ix *input.Index) []string {
	if !t.IsService() {
		return nil
	}
	svc := ix.Services[t.NamespacedName()]
	if svc == nil {
		return nil
	}
	var out []string
	for _, p := range svc.Spec.Ports {
		if input.ProtocolOrTCP(p.Protocol) == corev1.ProtocolTCP {
			out = append(out, plan.ClusterName(t.Namespace, t.Name, p.Port), plan.GRPCClusterName(t.Namespace, t.Name, p.Port))
		}
	}
	return out
}

// retryBudgetOf is the retry budget the XBackendTrafficPolicy governing a
// backend puts on its HTTP clusters (HTTPRoutes' and GRPCRoutes': a raw
// TCP cluster has no retries); nil when none does.
func (tr *traffic) retryBudgetOf(t trafficpolicy.Target) *plan.RetryBudget {
	p, _ := tr.judged.PlanOf(t)
	return p.RetryBudget
}

// statuses are the policies' complete statuses, their ancestors
// the Gateways reach names as reaching each Service target's ports.
func (tr *traffic) statuses(reach map[input.ServicePort][]types.NamespacedName, ix *input.Index, controller gwv1.GatewayController, stamp metav1.Time) map[types.NamespacedName]gwv1.PolicyStatus {
	if tr.judged == nil || len(tr.judged.Verdicts) == 0 {
		return nil
	}
	reaching := func(t trafficpolicy.Target) []types.NamespacedName {
		svc := ix.Services[t.NamespacedName()]
		if !t.IsService() || svc == nil {
			return nil // an XBackend's Gateways come with its routes
		}
		var out []types.NamespacedName
		for _, p := range svc.Spec.Ports {
			for _, gw := range reach[input.ServicePort{Service: t.NamespacedName(), Port: p.Port}] {
				if !slices.Contains(out, gw) {
					out = append(out, gw)
				}
			}
		}
		slices.SortFunc(out, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
		return out
	}
	out := make(map[types.NamespacedName]gwv1.PolicyStatus, len(tr.judged.Verdicts))
	for _, v := range tr.judged.Verdicts {
		out[v.Name] = trafficpolicy.Status(v, reaching, controller, v.Policy.Status, stamp)
	}
	return out
}

// trafficObjects are the XBackendTrafficPolicies by key (the last of a key
// wins, as Judge keeps them) and the XBackends they may target.
type trafficObjects struct {
	policies  map[types.NamespacedName]*gwxv1a1.XBackendTrafficPolicy
	xbackends []*gwxv1a1.XBackend
}

func newTrafficObjects(in Inputs) trafficObjects {
	return trafficObjects{
		policies:  input.ByKey(in.XBackendTrafficPolicies, func(o *gwxv1a1.XBackendTrafficPolicy) types.NamespacedName { return input.NameOf(o.Namespace, o.Name) }),
		xbackends: in.XBackends,
	}
}

// set stores a policy, or deletes it when p is nil.
func (o trafficObjects) set(nn types.NamespacedName, p *gwxv1a1.XBackendTrafficPolicy) {
	if p == nil {
		delete(o.policies, nn)
		return
	}
	o.policies[nn] = p
}

// inputs are the objects as judgeTraffic reads them.
func (o trafficObjects) inputs() Inputs {
	return Inputs{XBackendTrafficPolicies: input.ValuesOf(o.policies), XBackends: o.xbackends}
}

// budgetsChanged lists the Services whose retry budget differs between
// two judgements.
func budgetsChanged(before, after traffic) []types.NamespacedName {
	var out []types.NamespacedName
	seen := map[trafficpolicy.Target]bool{}
	for _, res := range []*trafficpolicy.Result{before.judged, after.judged} {
		for _, t := range res.Governed() {
			if seen[t] || !t.IsService() {
				continue
			}
			seen[t] = true
			if !sameBudget(before.retryBudgetOf(t), after.retryBudgetOf(t)) {
				out = append(out, t.NamespacedName())
			}
		}
	}
	return out
}

// sameSessions: the two maps name the same clusters with equal sessions.
func sameSessions(a, b map[string]*plan.Session) bool {
	return maps.EqualFunc(a, b, func(x, y *plan.Session) bool { return *x == *y })
}

func sameBudget(a, b *plan.RetryBudget) bool { return a == b || a != nil && b != nil && *a == *b }
