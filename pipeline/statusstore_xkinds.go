package pipeline

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/condition"
)

// The experimental kinds (GEP-4894) in the log and /debug/status: an
// XBackend's parents (one per Gateway whose routes reach it), an
// XBackendTrafficPolicy's ancestors.

// logXKinds logs each XBackend and XBackendTrafficPolicy whose conditions
// of ours changed from old to next.
func logXKinds(s *StatusStore, old, next translator.GatewayAPIStatuses) {
	if !sameMap(old.XBackends, next.XBackends) {
		for _, nn := range sortedKeys(next.XBackends) {
			parents := ourXParents(next.XBackends[nn], s.controller)
			if before, ok := old.XBackends[nn]; !ok || !sameParents(ourXParents(before, s.controller), parents) {
				var conds []metav1.Condition
				for _, p := range parents {
					conds = append(conds, prefixed("parent "+ancestorName(p.ParentRef)+" ", p.Conditions)...)
				}
				s.logConditions(string(translator.KindXBackend), nn.String(), conds)
			}
		}
	}
	if !sameMap(old.XBackendTrafficPolicies, next.XBackendTrafficPolicies) {
		for _, nn := range sortedKeys(next.XBackendTrafficPolicies) {
			ancestors := condition.OurAncestors(next.XBackendTrafficPolicies[nn], s.controller)
			if before, ok := old.XBackendTrafficPolicies[nn]; !ok || !sameConditions(condition.OurAncestors(before, s.controller), ancestors) {
				var conds []metav1.Condition
				for _, a := range ancestors {
					conds = append(conds, prefixed("ancestor "+ancestorName(a.AncestorRef)+" ", a.Conditions)...)
				}
				s.logConditions(string(translator.KindXBackendTrafficPolicy), nn.String(), conds)
			}
		}
	}
}

// ourXParents are an XBackend's parents of controller, as a route's (the
// same three fields), for the route's compare and log.
func ourXParents(st gwxv1a1.BackendStatus, controller gwv1.GatewayController) []gwv1.RouteParentStatus {
	var out []gwv1.RouteParentStatus
	for _, a := range st.Ancestors {
		if a.ControllerName == controller {
			out = append(out, gwv1.RouteParentStatus{ControllerName: a.ControllerName, ParentRef: a.AncestorRef, Conditions: a.Conditions})
		}
	}
	return out
}

// debugXKinds is the X-kinds' part of /debug/status, each list sorted by
// namespace/name: "xBackends" (status.parents) and
// "xBackendTrafficPolicies" (status.ancestors).
func debugXKinds(st translator.GatewayAPIStatuses) jsonFields {
	return jsonFields{
		{"xBackends", debugList(st.XBackends)},
		{"xBackendTrafficPolicies", debugList(st.XBackendTrafficPolicies)},
	}
}

// debugList is statuses as debugRoute entries, sorted; [] when none.
func debugList[S any](statuses map[types.NamespacedName]S) []debugRoute[S] {
	out := make([]debugRoute[S], 0, len(statuses))
	for _, nn := range sortedKeys(statuses) {
		out = append(out, debugRoute[S]{nn.Namespace, nn.Name, statuses[nn]})
	}
	return out
}
