package statuswriter

import (
	"k8s.io/apimachinery/pkg/api/equality"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/condition"
)

// needsWrite reports whether the live status's entries of controller differ
// from the desired ones: the compare before any write.
func needsWrite(live, desired gwv1.PolicyStatus, controller gwv1.GatewayController) bool {
	return entriesDiffer(live.Ancestors, desired.Ancestors, controller)
}

// merge returns live's status with controller's entries replaced by the
// desired ones (mergeEntries).
func merge(live, desired gwv1.PolicyStatus, controller gwv1.GatewayController) gwv1.PolicyStatus {
	return gwv1.PolicyStatus{Ancestors: mergeEntries(live.Ancestors, desired.Ancestors, controller)}
}

// routeNeedsWrite is needsWrite for a route's parents (every route kind's
// status is a RouteStatus).
func routeNeedsWrite(live, desired gwv1.RouteStatus, controller gwv1.GatewayController) bool {
	return entriesDiffer(live.Parents, desired.Parents, controller)
}

// mergeRoute is merge for a route's parents, trimmed to the API's limit.
func mergeRoute(live, desired gwv1.RouteStatus, controller gwv1.GatewayController) gwv1.RouteStatus {
	out := gwv1.RouteStatus{Parents: mergeEntries(live.Parents, desired.Parents, controller)}
	if len(out.Parents) > maxRouteParents {
		// The API admits 32: ours go first among those dropped, never
		// another controller's.
		out.Parents = keepOthers(out.Parents, controller, maxRouteParents)
	}
	return out
}

// entriesDiffer reports whether live's entries of controller differ from
// desired's.
func entriesDiffer[E condition.StatusEntry](live, desired []E, controller gwv1.GatewayController) bool {
	a, b := condition.Ours(live, controller), condition.Ours(desired, controller)
	if len(a) == 0 && len(b) == 0 {
		return false
	}
	return !equality.Semantic.DeepEqual(a, b)
}

// mergeEntries returns live with controller's entries replaced by the
// desired ones. Other controllers' entries stay exactly as, and where,
// they are on the live object (the translator's copy of them may be
// older); ours take the place of our first live entry, or go last when
// there was none.
func mergeEntries[E condition.StatusEntry](live, desired []E, controller gwv1.GatewayController) []E {
	want := condition.Ours(desired, controller)
	out := make([]E, 0, len(live)+len(want))
	placed := false
	for _, e := range live {
		if condition.ControllerOf(e) != controller {
			out = append(out, e)
			continue
		}
		if !placed {
			out = append(out, want...)
			placed = true
		}
	}
	if !placed {
		out = append(out, want...)
	}
	return out
}

// maxRouteParents is the API's limit on status.parents.
const maxRouteParents = 32

// keepOthers trims parents to limit by dropping our last entries.
func keepOthers(parents []gwv1.RouteParentStatus, controller gwv1.GatewayController, limit int) []gwv1.RouteParentStatus {
	excess := len(parents) - limit
	out := make([]gwv1.RouteParentStatus, 0, limit)
	for i := len(parents) - 1; i >= 0; i-- {
		if excess > 0 && parents[i].ControllerName == controller {
			excess--
			continue
		}
		out = append(out, parents[i])
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}
