package translator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rejudgeTraffic judges the XBackendTrafficPolicies again, on every
// Update (they are few, and a Service's coming or going changes their
// targets as much as their own edits do): the Services whose retry budget
// changed are translated again, and the Gateway rules run whole when the
// routes' sessions changed.
func (t *Translator) rejudgeTraffic(u *update) {
	w := t.world
	before := t.traffic
	if before.judged == nil && len(w.traffic.policies) == 0 {
		return // none before, none now
	}
	t.traffic = judgeTraffic(w.traffic.inputs(), w.ix)
	for _, svc := range budgetsChanged(before, t.traffic) {
		u.services[svc] = true
	}
	if !sameSessions(before.sessions, t.traffic.sessions) && w.gateway.any() {
		u.gateways = true
	}
}

// restatusTraffic puts the policies' statuses, against the Gateways that
// reach their targets now, into out and the world's last Output.
func (t *Translator) restatusTraffic(out *Output, stamp metav1.Time) {
	w := t.world
	st := t.traffic.statuses(w.gateways.judged.Reach, w.ix, t.policyConfig.ControllerName, stamp)
	out.GatewayAPI.XBackendTrafficPolicies = st
	w.out.GatewayAPI.XBackendTrafficPolicies = st
}
