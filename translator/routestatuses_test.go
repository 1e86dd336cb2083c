package translator

import (
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Every route kind finds its own statuses among GatewayAPIStatuses (the
// field named after its plural), and only those.
func TestRouteStatusesOfEveryRouteKind(t *testing.T) {
	nn := types.NamespacedName{Namespace: "shop", Name: "r"}
	parents := []gwv1.RouteParentStatus{{ControllerName: "me"}}
	for _, rk := range RouteKinds {
		var st GatewayAPIStatuses
		field := reflect.ValueOf(&st).Elem().FieldByName(string(rk.Kind()) + "s")
		if !field.IsValid() {
			t.Fatalf("GatewayAPIStatuses has no field %ss", rk.Kind())
		}
		m := reflect.MakeMap(field.Type())
		status := reflect.New(field.Type().Elem()).Elem()
		status.FieldByName("RouteStatus").Set(reflect.ValueOf(gwv1.RouteStatus{Parents: parents}))
		m.SetMapIndex(reflect.ValueOf(nn), status)
		field.Set(m)

		got := RouteStatusesOf(st, rk.Kind())
		if s, ok := got.Get(nn); got.Len() != 1 || !ok || len(s.Parents) != 1 || !slices.Equal(got.SortedKeys(), []types.NamespacedName{nn}) {
			t.Errorf("%s: statuses = %d, %v, %v", rk.Kind(), got.Len(), s, ok)
		}
		if !got.Same(RouteStatusesOf(st, rk.Kind())) || got.Same(RouteStatusesOf(GatewayAPIStatuses{}, rk.Kind())) {
			t.Errorf("%s: Same does not tell the very map", rk.Kind())
		}
		for _, other := range RouteKinds {
			if other.Kind() != rk.Kind() && RouteStatusesOf(st, other.Kind()).Len() != 0 {
				t.Errorf("%s reads the statuses of %s", other.Kind(), rk.Kind())
			}
		}
	}
	if RouteStatusesOf(GatewayAPIStatuses{}, KindGateway).Len() != 0 {
		t.Error("a Gateway has route statuses")
	}
}
