package pipeline

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/condition"
)

// The experimental kinds (GEP-4894) in the log and /debug/status: an
// XBackend's parents (one per Gateway whose routes reach it), an
// XBackendTrafficPolicy's ancestors, an XMesh's conditions (its status
// is ours whole, like a GatewayClass's).

// logXKinds logs each XBackend, XBackendTrafficPolicy and XMesh whose
// conditions of ours changed from old to next.
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
	for _, name := range slices.Sorted(maps.Keys(next.XMeshes)) {
		if before, ok := old.XMeshes[name]; !ok || !sameConds(before.Conditions, next.XMeshes[name].Conditions) {
			s.logConditions(string(translator.KindXMesh), name, next.XMeshes[name].Conditions)
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
// namespace/name: "xBackends" (status.parents),
// "xBackendTrafficPolicies" (status.ancestors) and "xMeshes" (by name).
func debugXKinds(st translator.GatewayAPIStatuses) jsonFields {
	meshes := make([]debugXMesh, 0, len(st.XMeshes))
	for _, name := range slices.Sorted(maps.Keys(st.XMeshes)) {
		meshes = append(meshes, debugXMesh{name, st.XMeshes[name]})
	}
	return jsonFields{
		{"xBackends", debugList(st.XBackends)},
		{"xBackendTrafficPolicies", debugList(st.XBackendTrafficPolicies)},
		{"xMeshes", meshes},
	}
}

type debugXMesh struct {
	Name   string             `json:"name"`
	Status gwxv1a1.MeshStatus `json:"status"`
}

// debugList is statuses as debugRoute entries, sorted; [] when none.
func debugList[S any](statuses map[types.NamespacedName]S) []debugRoute[S] {
	out := make([]debugRoute[S], 0, len(statuses))
	for _, nn := range sortedKeys(statuses) {
		out = append(out, debugRoute[S]{nn.Namespace, nn.Name, statuses[nn]})
	}
	return out
}
