package backendcerts

import (
	"maps"
	"slices"
	"time"

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
	conds := inv.conditions(byBackend, preferred, now, "XBackend", func(key types.NamespacedName) bool {
		_, exists := statuses[key]
		return exists && slices.ContainsFunc(previous[key].Ancestors, func(a gwxv1a1.BackendAncestorStatus) bool {
			return a.ControllerName == controller && hasCondition(a.Conditions)
		})
	}, maps.Keys(previous))
	return translator.WithXBackendCondition(statuses, conds, previous, controller, now)
}
