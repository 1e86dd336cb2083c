package pipeline

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/condition"
)

var _ GatewayAPISink = (*StatusStore)(nil)

// ReportGatewayAPI stores the Gateway API statuses for /debug/status and
// logs each GatewayClass, Gateway, ListenerSet, route (of every route
// kind), XBackend, XBackendTrafficPolicy and XMesh whose conditions changed.
func (s *StatusStore) ReportGatewayAPI(statuses translator.GatewayAPIStatuses) {
	s.mu.Lock()
	old := s.gatewayAPI
	s.gatewayAPI = statuses
	s.mu.Unlock()

	for _, name := range slices.Sorted(maps.Keys(statuses.GatewayClasses)) {
		next := statuses.GatewayClasses[name]
		if before, ok := old.GatewayClasses[name]; !ok || !sameConds(before.Conditions, next.Conditions) {
			s.logConditions("GatewayClass", name, next.Conditions)
		}
	}
	logListenerHolders(s, "Gateway", old.Gateways, statuses.Gateways)
	logListenerHolders(s, "ListenerSet", asGatewayStatuses(old.ListenerSets), asGatewayStatuses(statuses.ListenerSets))
	for _, rk := range translator.RouteKinds {
		logRoutes(s, string(rk.Kind()), translator.RouteStatusesOf(old, rk.Kind()), translator.RouteStatusesOf(statuses, rk.Kind()))
	}
	logXKinds(s, old, statuses)
}

// logListenerHolders logs each Gateway (or ListenerSet, as
// asGatewayStatuses gives it) whose conditions or listeners changed.
func logListenerHolders(s *StatusStore, kind string, old, next map[types.NamespacedName]gwv1.GatewayStatus) {
	for _, nn := range sortedKeys(next) {
		st := next[nn]
		if before, ok := old[nn]; !ok || !sameGateway(before, st) {
			conds := st.Conditions
			for _, l := range st.Listeners {
				conds = append(slices.Clip(conds), prefixed("listener "+string(l.Name)+" ", l.Conditions)...)
			}
			s.logConditions(kind, nn.String(), conds)
		}
	}
}

// asGatewayStatuses are ListenerSet statuses in the shape of Gateway
// statuses: conditions and listeners, which are what is logged.
func asGatewayStatuses(sets map[types.NamespacedName]gwv1.ListenerSetStatus) map[types.NamespacedName]gwv1.GatewayStatus {
	out := make(map[types.NamespacedName]gwv1.GatewayStatus, len(sets))
	for nn, st := range sets {
		g := gwv1.GatewayStatus{Conditions: st.Conditions}
		for _, l := range st.Listeners {
			g.Listeners = append(g.Listeners, gwv1.ListenerStatus(l))
		}
		out[nn] = g
	}
	return out
}

// logRoutes logs each route of kind whose parents of ours changed from
// old to next.
func logRoutes(s *StatusStore, kind string, old, next translator.RouteStatuses) {
	if old.Same(next) {
		return // the translator hands back the same map when nothing changed
	}
	for _, nn := range next.SortedKeys() {
		st, _ := next.Get(nn)
		parents := condition.OurParents(st, s.controller)
		if before, ok := old.Get(nn); !ok || !sameParents(condition.OurParents(before, s.controller), parents) {
			var conds []metav1.Condition
			for _, p := range parents {
				conds = append(conds, prefixed("parent "+ancestorName(p.ParentRef)+" ", p.Conditions)...)
			}
			s.logConditions(kind, nn.String(), conds)
		}
	}
}

// logConditions writes one line per object: a group per condition, at
// warning level when one is not True (Conflicted is True when wrong, so
// it reads the other way).
func (s *StatusStore) logConditions(kind, name string, conds []metav1.Condition) {
	attrs := []any{"kind", kind, "name", name}
	level := slog.LevelInfo
	for _, c := range conds {
		bad := c.Status != metav1.ConditionTrue
		if strings.HasSuffix(c.Type, string(gwv1.ListenerConditionConflicted)) {
			bad = c.Status != metav1.ConditionFalse
		}
		if bad {
			level = slog.LevelWarn
		}
		attrs = append(attrs, slog.Group(c.Type, "status", string(c.Status), "reason", c.Reason, "message", c.Message))
	}
	s.log.Log(context.Background(), level, "status changed", attrs...)
}

// prefixed names conditions after their listener or parent, for the log.
func prefixed(prefix string, conds []metav1.Condition) []metav1.Condition {
	out := make([]metav1.Condition, len(conds))
	for i, c := range conds {
		c.Type = prefix + c.Type
		out[i] = c
	}
	return out
}

// sameConds compares what an operator reads, not lastTransitionTime.
func sameConds(a, b []metav1.Condition) bool {
	return slices.EqualFunc(a, b, func(c, d metav1.Condition) bool {
		return c.Type == d.Type && c.Status == d.Status && c.Reason == d.Reason &&
			c.Message == d.Message && c.ObservedGeneration == d.ObservedGeneration
	})
}

func sameGateway(a, b gwv1.GatewayStatus) bool {
	return sameConds(a.Conditions, b.Conditions) &&
		slices.EqualFunc(a.Listeners, b.Listeners, func(x, y gwv1.ListenerStatus) bool {
			return x.Name == y.Name && x.AttachedRoutes == y.AttachedRoutes && sameConds(x.Conditions, y.Conditions)
		})
}

func sameParents(a, b []gwv1.RouteParentStatus) bool {
	return slices.EqualFunc(a, b, func(x, y gwv1.RouteParentStatus) bool {
		return ancestorName(x.ParentRef) == ancestorName(y.ParentRef) && sameConds(x.Conditions, y.Conditions)
	})
}

// debugGatewayAPI is the Gateway API part of /debug/status, each list
// sorted by name: GatewayClasses, Gateways, the routes of each route kind
// (under the kind's plural: "httpRoutes"), ListenerSets, XBackends,
// XBackendTrafficPolicies and XMeshes.
func debugGatewayAPI(st translator.GatewayAPIStatuses) jsonFields {
	classes, gateways := []debugGatewayClass{}, []debugGateway{}
	for _, name := range slices.Sorted(maps.Keys(st.GatewayClasses)) {
		classes = append(classes, debugGatewayClass{name, st.GatewayClasses[name]})
	}
	for _, nn := range sortedKeys(st.Gateways) {
		gateways = append(gateways, debugGateway{nn.Namespace, nn.Name, st.Gateways[nn]})
	}
	out := jsonFields{{"gatewayClasses", classes}, {"gateways", gateways}}
	for _, rk := range translator.RouteKinds {
		routes := translator.RouteStatusesOf(st, rk.Kind())
		list := make([]debugRoute[gwv1.RouteStatus], 0, routes.Len())
		for _, nn := range routes.SortedKeys() {
			status, _ := routes.Get(nn)
			list = append(list, debugRoute[gwv1.RouteStatus]{nn.Namespace, nn.Name, status})
		}
		out = append(out, jsonField{lowerCamel(string(rk.Kind()) + "s"), list})
	}
	sets := make([]debugRoute[gwv1.ListenerSetStatus], 0, len(st.ListenerSets))
	for _, nn := range sortedKeys(st.ListenerSets) {
		sets = append(sets, debugRoute[gwv1.ListenerSetStatus]{nn.Namespace, nn.Name, st.ListenerSets[nn]})
	}
	out = append(out, jsonField{"listenerSets", sets})
	return append(out, debugXKinds(st)...)
}

// lowerCamel lowers a name's leading capitals but the one that starts
// the next word: HTTPRoutes is httpRoutes.
func lowerCamel(s string) string {
	r := []rune(s)
	for i := range r {
		if !unicode.IsUpper(r[i]) || (i > 0 && i+1 < len(r) && unicode.IsLower(r[i+1])) {
			break
		}
		r[i] = unicode.ToLower(r[i])
	}
	return string(r)
}

type debugGatewayClass struct {
	Name   string                  `json:"name"`
	Status gwv1.GatewayClassStatus `json:"status"`
}

type debugGateway struct {
	Namespace string             `json:"namespace"`
	Name      string             `json:"name"`
	Status    gwv1.GatewayStatus `json:"status"`
}

// debugRoute is one route (or ListenerSet) of a kind whose status is S
// (every route kind's is a RouteStatus).
type debugRoute[S any] struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    S      `json:"status"`
}
