package statuswriter

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// ReportGatewayAPI records the desired GatewayClass, Gateway, HTTPRoute and
// GRPCRoute statuses and queues those that differ from the cached live
// objects. A route that carried parents of ours and is no longer in the
// statuses (its parentRefs left our Gateways) is queued to have them
// removed.
func (w *Writer) ReportGatewayAPI(statuses translator.GatewayAPIStatuses) {
	w.mu.Lock()
	defer w.mu.Unlock()
	noteClearedRoutes(w.clearedRoutes, KindHTTPRoute, w.gatewayAPI.HTTPRoutes, statuses.HTTPRoutes)
	noteClearedRoutes(w.clearedRoutes, KindGRPCRoute, w.gatewayAPI.GRPCRoutes, statuses.GRPCRoutes)
	w.gatewayAPI = statuses
	if w.queue == nil {
		return // not the leader: the desired statuses wait for a term
	}
	for _, o := range w.gatewayAPIObjects() {
		if w.cachedDiffers(o) {
			w.queue.Add(o)
		}
	}
}

// gatewayAPIObjects is every Gateway API object with a desired status;
// w.mu is held.
func (w *Writer) gatewayAPIObjects() []Object {
	var out []Object
	for name := range w.gatewayAPI.GatewayClasses {
		out = append(out, Object{KindGatewayClass, types.NamespacedName{Name: name}})
	}
	for nn := range w.gatewayAPI.Gateways {
		out = append(out, Object{KindGateway, nn})
	}
	for nn := range w.gatewayAPI.HTTPRoutes {
		out = append(out, Object{KindHTTPRoute, nn})
	}
	for nn := range w.gatewayAPI.GRPCRoutes {
		out = append(out, Object{KindGRPCRoute, nn})
	}
	for o := range w.clearedRoutes {
		out = append(out, o)
	}
	return out
}

// noteClearedRoutes marks the routes of kind that had a desired status
// before and have none after, so our parents are removed from them, and
// unmarks those that have one again.
func noteClearedRoutes[S any](cleared map[Object]bool, kind Kind, before, after map[types.NamespacedName]S) {
	for nn := range before {
		if _, still := after[nn]; !still {
			cleared[Object{kind, nn}] = true
		}
	}
	for nn := range after {
		delete(cleared, Object{kind, nn})
	}
}

// cachedDiffers is the compare before queueing: true unless the cached
// object is known to carry the desired status already; w.mu is held.
func (w *Writer) cachedDiffers(o Object) bool {
	if w.opts.Cache == nil {
		return true
	}
	switch o.Kind {
	case KindGatewayClass:
		live, ok := w.opts.Cache.GatewayClass(o.Name)
		return !ok || classNeedsWrite(live.Status, w.gatewayAPI.GatewayClasses[o.Name])
	case KindGateway:
		live, ok := w.opts.Cache.Gateway(o.NamespacedName)
		return !ok || gatewayNeedsWrite(live.Status, w.gatewayAPI.Gateways[o.NamespacedName])
	case KindHTTPRoute:
		live, ok := w.opts.Cache.HTTPRoute(o.NamespacedName)
		return !ok || w.routeDiffers(o, live.Status.RouteStatus)
	case KindGRPCRoute:
		live, ok := w.opts.Cache.GRPCRoute(o.NamespacedName)
		return !ok || w.routeDiffers(o, live.Status.RouteStatus)
	}
	return true
}

// routeDiffers reports whether route o's live status lacks its desired
// parents of ours; w.mu is held.
func (w *Writer) routeDiffers(o Object, live gwv1.RouteStatus) bool {
	desired, _ := w.desiredRoute(o)
	return routeNeedsWrite(live, desired, w.opts.Controller)
}

// translatedRoute is the translator's status of route o, if it gave one;
// w.mu is held.
func (w *Writer) translatedRoute(o Object) (gwv1.RouteStatus, bool) {
	switch o.Kind {
	case KindHTTPRoute:
		st, ok := w.gatewayAPI.HTTPRoutes[o.NamespacedName]
		return st.RouteStatus, ok
	case KindGRPCRoute:
		st, ok := w.gatewayAPI.GRPCRoutes[o.NamespacedName]
		return st.RouteStatus, ok
	}
	return gwv1.RouteStatus{}, false
}

// desiredRoute is a route's desired status: the translator's, or none of
// ours for a cleared route; ok is false when neither applies. w.mu is held.
func (w *Writer) desiredRoute(o Object) (gwv1.RouteStatus, bool) {
	if st, ok := w.translatedRoute(o); ok {
		return st, true
	}
	return gwv1.RouteStatus{}, w.clearedRoutes[o]
}

// The whole status of a GatewayClass or Gateway of ours is ours.
func classNeedsWrite(live, desired gwv1.GatewayClassStatus) bool {
	return !equality.Semantic.DeepEqual(live, desired)
}

func gatewayNeedsWrite(live, desired gwv1.GatewayStatus) bool {
	return !equality.Semantic.DeepEqual(live, desired)
}

func (w *Writer) writeGatewayClass(ctx context.Context, o Object) error {
	w.mu.Lock()
	desired, ok := w.gatewayAPI.GatewayClasses[o.Name]
	w.mu.Unlock()
	if !ok {
		return nil // no longer ours, or gone
	}
	client := w.opts.Gateway.GatewayV1().GatewayClasses()
	return writeStatus(ctx, w, o, statusOps[*gwv1.GatewayClass]{
		cached: func() (*gwv1.GatewayClass, bool) {
			if w.opts.Cache == nil {
				return nil, false
			}
			return w.opts.Cache.GatewayClass(o.Name)
		},
		get: func(ctx context.Context) (*gwv1.GatewayClass, error) {
			return client.Get(ctx, o.Name, metav1.GetOptions{})
		},
		merged: func(live *gwv1.GatewayClass) *gwv1.GatewayClass {
			if !classNeedsWrite(live.Status, desired) {
				return nil
			}
			updated := live.DeepCopy()
			updated.Status = *desired.DeepCopy()
			return updated
		},
		update: func(ctx context.Context, obj *gwv1.GatewayClass) error {
			_, err := client.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
			return err
		},
	})
}

func (w *Writer) writeGateway(ctx context.Context, o Object) error {
	w.mu.Lock()
	desired, ok := w.gatewayAPI.Gateways[o.NamespacedName]
	w.mu.Unlock()
	if !ok {
		return nil
	}
	client := w.opts.Gateway.GatewayV1().Gateways(o.Namespace)
	return writeStatus(ctx, w, o, statusOps[*gwv1.Gateway]{
		cached: func() (*gwv1.Gateway, bool) {
			if w.opts.Cache == nil {
				return nil, false
			}
			return w.opts.Cache.Gateway(o.NamespacedName)
		},
		get: func(ctx context.Context) (*gwv1.Gateway, error) {
			return client.Get(ctx, o.Name, metav1.GetOptions{})
		},
		merged: func(live *gwv1.Gateway) *gwv1.Gateway {
			if !gatewayNeedsWrite(live.Status, desired) {
				return nil
			}
			updated := live.DeepCopy()
			updated.Status = *desired.DeepCopy()
			return updated
		},
		update: func(ctx context.Context, obj *gwv1.Gateway) error {
			_, err := client.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
			return err
		},
	})
}

// routeClient is what writeRoute needs of a route kind's typed client.
type routeClient[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// writeRoute replaces the route's parents of our controller, keeping
// every other controller's. cached is its kind's lookup in a Cache; status
// is where a T keeps its RouteStatus.
func writeRoute[T interface {
	comparable
	DeepCopy() T
}](ctx context.Context, w *Writer, o Object, client routeClient[T], cached func(Cache, types.NamespacedName) (T, bool), status func(T) *gwv1.RouteStatus) error {
	w.mu.Lock()
	desired, ok := w.desiredRoute(o)
	w.mu.Unlock()
	if !ok {
		return nil
	}
	var none T
	err := writeStatus(ctx, w, o, statusOps[T]{
		cached: func() (T, bool) {
			if w.opts.Cache == nil {
				return none, false
			}
			return cached(w.opts.Cache, o.NamespacedName)
		},
		get: func(ctx context.Context) (T, error) {
			return client.Get(ctx, o.Name, metav1.GetOptions{})
		},
		merged: func(live T) T {
			if !routeNeedsWrite(*status(live), desired, w.opts.Controller) {
				return none
			}
			updated := live.DeepCopy()
			*status(updated) = mergeRoute(*status(live), desired, w.opts.Controller)
			return updated
		},
		update: func(ctx context.Context, obj T) error {
			_, err := client.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
			return err
		},
	})
	if err == nil {
		w.mu.Lock()
		if _, desiredAgain := w.translatedRoute(o); !desiredAgain {
			delete(w.clearedRoutes, o) // cleared (or gone): nothing left of ours
		}
		w.mu.Unlock()
	}
	return err
}
