package backendcerts

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
)

// ApplyXBackends is Apply for XBackends: ConditionBackendCertificatesValid
// on our status.parents entries of every XBackend whose clusters some
// Envoy reported a backend certificate on. origins is the translation's
// cluster → XBackends (Output.XBackendOrigins), apart from the policies'
// so that an XBackend is never taken for a policy of its name. The expiry
// metric is per policy only: an XBackend's is in its condition.
func (inv *Inventory) ApplyXBackends(statuses map[types.NamespacedName]gwxv1a1.BackendStatus, origins map[string][]types.NamespacedName,
	previous map[types.NamespacedName]gwxv1a1.BackendStatus, controller gwv1.GatewayController, now time.Time) map[types.NamespacedName]gwxv1a1.BackendStatus {
	if controller == "" {
		controller = translator.DefaultControllerName
	}
	byBackend, preferred := inv.observe(func(b types.NamespacedName) bool { _, ok := statuses[b]; return ok }, origins, now, true)
	conds := make(map[types.NamespacedName]metav1.Condition, len(byBackend))
	for key, obs := range byBackend {
		conds[key] = inv.condition(obs, preferred, now, "XBackend")
	}
	for key, st := range previous {
		if _, seen := byBackend[key]; seen {
			continue
		}
		if _, exists := statuses[key]; !exists {
			continue
		}
		for _, a := range st.Ancestors {
			if a.ControllerName == controller && hasCondition(a.Conditions) {
				conds[key] = inv.noSightings("XBackend")
				break
			}
		}
	}
	return translator.WithXBackendCondition(statuses, conds, previous, controller, now)
}
