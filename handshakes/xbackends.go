package handshakes

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
)

// ApplyXBackends is Apply for XBackends: ConditionHandshakesSucceeding on
// our status.parents entries of every XBackend whose clusters some Envoy
// reported on within the window. origins is the same translation's
// cluster → XBackends (Output.XBackendOrigins), apart from the policies'
// so that an XBackend is never taken for a policy of its name. The
// metrics count per policy only: an XBackend's failures are in its
// condition and in Envoy's own stats.
func (t *Tracker) ApplyXBackends(statuses map[types.NamespacedName]gwxv1a1.BackendStatus, origins map[string][]types.NamespacedName,
	previous map[types.NamespacedName]gwxv1a1.BackendStatus, controller gwv1.GatewayController, now time.Time) map[types.NamespacedName]gwxv1a1.BackendStatus {
	t.mu.Lock()
	t.backs = origins
	t.mu.Unlock()
	byBackend := t.observe(func(b types.NamespacedName) bool { _, ok := statuses[b]; return ok }, origins)
	conds := make(map[types.NamespacedName]metav1.Condition, len(byBackend))
	for key, obs := range byBackend {
		if cond, ok := t.condition(obs); ok {
			conds[key] = cond
		}
	}
	return translator.WithXBackendCondition(statuses, conds, previous, controller, now)
}
