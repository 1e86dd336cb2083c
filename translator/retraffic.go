package translator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rejudgeTraffic judges the XBackendTrafficPolicies again, on every
// Update (they are few, and a Service's or XBackend's coming or going
// changes their targets as much as their own edits do): the Services whose
// retry budget changed are translated again, the XBackends judged and
// emitted again when one's did, and the Gateway rules run whole when the
// routes' sessions changed. It runs before rejudgeXBackends, which reads
// the budgets.
func (t *Translator) rejudgeTraffic(u *update) {
	w := t.world
	before := t.traffic
	if before.judged == nil && len(w.traffic.policies) == 0 {
		return // none before, none now
	}
	t.traffic = judgeTraffic(w.traffic.list(), w.ix)
	for _, target := range budgetsChanged(before, t.traffic) {
		if target.IsXBackend() {
			u.xbackends = true
			continue
		}
		u.services[target.NamespacedName()] = true
	}
	if !sameSessions(before.sessions, t.traffic.sessions) && w.gateway.any() {
		u.gateways = true
	}
}

// restatusTraffic puts the policies' statuses, against the Gateways that
// reach their targets now, into out and the world's last Output.
func (t *Translator) restatusTraffic(out *Output, stamp metav1.Time) {
	w := t.world
	st := t.traffic.statuses(w.gateways.judged, w.ix, t.policyConfig.ControllerName, stamp)
	out.GatewayAPI.XBackendTrafficPolicies = st
	w.out.GatewayAPI.XBackendTrafficPolicies = st
}
