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

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/gateway"
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

// judgeTraffic judges the XBackendTrafficPolicies against the Services
// and XBackends of ix, for this call's clusters and route tables.
func judgeTraffic(policies []*gwxv1a1.XBackendTrafficPolicy, ix *input.Index) traffic {
	if len(policies) == 0 {
		return traffic{} // the common case costs nothing
	}
	xbackends := make([]*gwxv1a1.XBackend, 0, len(ix.XBackends))
	for _, x := range ix.XBackends {
		xbackends = append(xbackends, x.Object)
	}
	res := trafficpolicy.Judge(policies, ix.Services, xbackends)
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
// Service's TCP ports, each as HTTPRoutes and GRPCRoutes reach it; an
// XBackend's spec.port, the same two ways (plan/names.go).
func clustersOf(t trafficpolicy.Target, ix *input.Index) []string {
	if t.IsXBackend() {
		x, ok := ix.XBackends[t.NamespacedName()]
		if !ok {
			return nil
		}
		port := int32(x.Object.Spec.Port.Port)
		return []string{plan.XBackendClusterName(t.Namespace, t.Name, port), plan.XBackendGRPCClusterName(t.Namespace, t.Name, port)}
	}
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

// statuses are the policies' complete statuses, their ancestors the
// Gateways judged names as reaching each Service target's ports, or each
// XBackend target (the reach of the XBackend's own status.parents).
func (tr *traffic) statuses(judged *gateway.Result, ix *input.Index, controller gwv1.GatewayController, stamp metav1.Time) map[types.NamespacedName]gwv1.PolicyStatus {
	if tr.judged == nil || len(tr.judged.Verdicts) == 0 {
		return nil
	}
	var xreach map[types.NamespacedName][]types.NamespacedName // made once, when a target is an XBackend
	reaching := func(t trafficpolicy.Target) []types.NamespacedName {
		if t.IsXBackend() {
			if xreach == nil {
				xreach = judged.XBackendReach()
			}
			return xreach[t.NamespacedName()] // sorted
		}
		svc := ix.Services[t.NamespacedName()]
		if !t.IsService() || svc == nil {
			return nil
		}
		out := backendtls.GatewaysReaching(svc, t.NamespacedName(), "", judged.Reach)
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
// wins, as Judge keeps them); the XBackends they may target are the
// world's index's, which follows their changes.
type trafficObjects struct {
	policies map[types.NamespacedName]*gwxv1a1.XBackendTrafficPolicy
}

func newTrafficObjects(in Inputs) trafficObjects {
	return trafficObjects{
		policies: input.ByKey(in.XBackendTrafficPolicies, func(o *gwxv1a1.XBackendTrafficPolicy) types.NamespacedName { return input.NameOf(o.Namespace, o.Name) }),
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

// list is the policies as judgeTraffic reads them.
func (o trafficObjects) list() []*gwxv1a1.XBackendTrafficPolicy {
	return input.ValuesOf(o.policies)
}

// budgetsChanged lists the Services and XBackends whose retry budget
// differs between two judgements.
func budgetsChanged(before, after traffic) []trafficpolicy.Target {
	var out []trafficpolicy.Target
	seen := map[trafficpolicy.Target]bool{}
	for _, res := range []*trafficpolicy.Result{before.judged, after.judged} {
		for _, t := range res.Governed() {
			if seen[t] {
				continue
			}
			seen[t] = true
			if !sameBudget(before.retryBudgetOf(t), after.retryBudgetOf(t)) {
				out = append(out, t)
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
