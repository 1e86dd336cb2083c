package handshakes

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// maxMessage bounds the condition message; the API allows 32 KiB.
const maxMessage = 1024

// observation is one (fleet, cluster) window as a policy sees it.
type observation struct {
	fleet, cluster string
	state          state
	sum            counts
}

// Apply returns statuses with ConditionHandshakesSucceeding on our entries
// of every policy governing a cluster some Envoy reported on within the
// window. statuses is the translator's read-only output: changed entries
// are deep copies in a new map. origins is the same translation's cluster
// → policies; previous keeps lastTransitionTime while the status holds.
func (t *Tracker) Apply(statuses map[types.NamespacedName]gwv1.PolicyStatus, origins map[string][]types.NamespacedName,
	previous translator.PreviousStatus, controller gwv1.GatewayController, now time.Time) map[types.NamespacedName]gwv1.PolicyStatus {
	t.mu.Lock()
	t.governs = origins
	t.mu.Unlock()
	byPolicy := t.observe(func(p types.NamespacedName) bool { _, ok := statuses[p]; return ok }, origins)
	t.metrics.keepOnly(func(p types.NamespacedName) bool { _, ok := statuses[p]; return ok })
	t.metrics.setWindow(byPolicy)
	conds := make(map[types.NamespacedName]metav1.Condition, len(byPolicy))
	for key, obs := range byPolicy {
		if cond, ok := t.condition(obs); ok {
			conds[key] = cond
		}
	}
	return translator.WithAncestorCondition(statuses, conds, previous, controller, now)
}

// observe lists, per object of origins that has says to look at (a
// policy, or an XBackend), the windows of the clusters it governs, sorted
// by fleet and cluster.
func (t *Tracker) observe(has func(types.NamespacedName) bool, origins map[string][]types.NamespacedName) map[types.NamespacedName][]observation {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	byPolicy := map[types.NamespacedName][]observation{}
	for key, w := range t.clusters {
		policies := origins[key.cluster]
		if len(policies) == 0 {
			continue
		}
		v := t.merged(key, w)
		s := v.stateAt(now, t.window)
		if !s.reported {
			continue
		}
		o := observation{fleet: key.fleet, cluster: key.cluster, state: s, sum: v.sum(now, t.window)}
		for _, p := range policies {
			if has(p) {
				byPolicy[p] = append(byPolicy[p], o)
			}
		}
	}
	for _, obs := range byPolicy {
		slices.SortFunc(obs, func(a, b observation) int {
			return cmp.Or(cmp.Compare(a.fleet, b.fleet), cmp.Compare(a.cluster, b.cluster))
		})
	}
	return byPolicy
}

// condition is False, naming the first failing cluster, when any fails;
// True when handshakes succeeded and none failed since; ok=false when the
// Envoys saw neither (a cluster without TLS traffic says nothing).
func (t *Tracker) condition(obs []observation) (metav1.Condition, bool) {
	var failing, succeeding []observation
	for _, o := range obs {
		switch {
		case o.state.failing:
			failing = append(failing, o)
		case o.sum[slotHandshake] > 0:
			succeeding = append(succeeding, o)
		}
	}
	c := metav1.Condition{Type: ConditionHandshakesSucceeding}
	switch {
	case len(failing) > 0:
		o := failing[0]
		f := o.state.cause
		reasons := byReason(o.sum)
		var all uint64
		for _, v := range reasons {
			all += v
		}
		msg := fmt.Sprintf("Envoys of fleet %q report %d TLS handshakes to cluster %s failed in the last %s because %s (cluster.%s.%s)",
			o.fleet, reasons[f.reason], o.cluster, t.window, f.meaning, o.cluster, f.counter)
		if all > reasons[f.reason] {
			msg += fmt.Sprintf("; %d failed in all", all)
		}
		if cf := o.sum[slotConnectFailed]; cf > 0 {
			msg += fmt.Sprintf("; %d upstream connections failed (upstream_cx_connect_fail)", cf)
		}
		if more := len(failing) - 1; more > 0 {
			msg += fmt.Sprintf("; and %d more failing (fleet, cluster) pairs: %s", more, pairs(failing[1:]))
		}
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, f.reason, translator.CapMessage(msg, maxMessage)
	case len(succeeding) > 0:
		// No count here: it moves with every flush, and the status would
		// be written as often; /debug/status and Envoy's stats have it.
		msg := fmt.Sprintf("Envoys report successful TLS handshakes in the last %s, and no failure since the last success, on %s",
			t.window, pairs(succeeding))
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, ReasonHandshakesSucceeding, translator.CapMessage(msg, maxMessage)
	default:
		return c, false
	}
	return c, true
}

// pairs names (fleet, cluster) pairs for a message.
func pairs(obs []observation) string {
	parts := make([]string, 0, len(obs))
	for _, o := range obs {
		parts = append(parts, fmt.Sprintf("cluster %s of fleet %q", o.cluster, o.fleet))
	}
	return strings.Join(parts, ", ")
}
