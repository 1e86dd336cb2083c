package input

import (
	"iter"
	"maps"
	"reflect"

	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// RouteStatuses are one route kind's computed statuses, read and written
// as the RouteStatus each kind's status type holds (and nothing else).
type RouteStatuses interface {
	Len() int
	Get(types.NamespacedName) (gwv1.RouteStatus, bool)
	// Set records a route's status, making the kind's map if there is none.
	Set(types.NamespacedName, gwv1.RouteStatus)
	All() iter.Seq2[types.NamespacedName, gwv1.RouteStatus]
	// SortedKeys are the routes' names by namespace, then name.
	SortedKeys() []types.NamespacedName
	// Same reports whether other is the very same map: the translator
	// hands back the same map when no status of the kind changed.
	Same(other RouteStatuses) bool
}

// routeStatus is every route kind's status type: a RouteStatus, inline
// (gwv1.HTTPRouteStatus, ..., all alike), so one conversion reads any.
type routeStatus interface {
	~struct {
		gwv1.RouteStatus `json:",inline"`
	}
}

// statusMap is RouteStatuses over one kind's map (a pointer to the field
// of RouteStatusMaps, so Set can make it).
type statusMap[S routeStatus] struct{ m *map[types.NamespacedName]S }

func (s statusMap[S]) Len() int { return len(*s.m) }

func (s statusMap[S]) Get(nn types.NamespacedName) (gwv1.RouteStatus, bool) {
	v, ok := (*s.m)[nn]
	return routeStatusOf(v), ok
}

func (s statusMap[S]) Set(nn types.NamespacedName, st gwv1.RouteStatus) {
	if *s.m == nil {
		*s.m = map[types.NamespacedName]S{}
	}
	(*s.m)[nn] = S{st}
}

func (s statusMap[S]) All() iter.Seq2[types.NamespacedName, gwv1.RouteStatus] {
	return func(yield func(types.NamespacedName, gwv1.RouteStatus) bool) {
		for nn, v := range maps.All(*s.m) {
			if !yield(nn, routeStatusOf(v)) {
				return
			}
		}
	}
}

func (s statusMap[S]) SortedKeys() []types.NamespacedName { return SortedKeys(*s.m) }

func (s statusMap[S]) Same(other RouteStatuses) bool {
	o, ok := other.(statusMap[S])
	return ok && reflect.ValueOf(*s.m).UnsafePointer() == reflect.ValueOf(*o.m).UnsafePointer()
}

func routeStatusOf[S routeStatus](v S) gwv1.RouteStatus {
	return struct {
		gwv1.RouteStatus `json:",inline"`
	}(v).RouteStatus
}
