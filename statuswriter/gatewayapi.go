package statuswriter

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// ReportGatewayAPI records the desired GatewayClass, Gateway, ListenerSet,
// route (every route kind), XBackend and XBackendTrafficPolicy statuses
// and queues those that changed since the last report and differ from
// the cached live objects. A route that carried parents of ours and is no longer in the statuses (its
// parentRefs left our Gateways), or an XBackend no route of ours reaches
// any more, is queued to have them removed.
func (w *Writer) ReportGatewayAPI(statuses translator.GatewayAPIStatuses) {
	w.mu.Lock()
	defer w.mu.Unlock()
	prev := w.gatewayAPI
	w.gatewayAPI = statuses
	queue := func(o Object) {
		if w.queue != nil { // else the desired statuses wait for a term
			w.queueIfDiffers(o)
		}
	}
	diffStatuses(prev.GatewayClasses, statuses.GatewayClasses, func(name string) {
		queue(Object{KindGatewayClass, types.NamespacedName{Name: name}})
	}, nil)
	diffStatuses(prev.Gateways, statuses.Gateways, func(nn types.NamespacedName) { queue(Object{KindGateway, nn}) }, nil)
	diffStatuses(prev.ListenerSets, statuses.ListenerSets, func(nn types.NamespacedName) { queue(Object{KindListenerSet, nn}) }, nil)
	for _, rk := range translator.RouteKinds {
		kind := Kind(rk.Kind())
		diffRoutes(translator.RouteStatusesOf(prev, rk.Kind()), translator.RouteStatusesOf(statuses, rk.Kind()), func(nn types.NamespacedName) {
			o := Object{kind, nn}
			delete(w.cleared, o)
			queue(o)
		}, func(nn types.NamespacedName) {
			o := Object{kind, nn}
			w.cleared[o] = true
			queue(o)
		})
	}
	w.reportX(prev, statuses, queue)
	if w.queue != nil {
		w.recheckReported(true)
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
	for nn := range w.gatewayAPI.ListenerSets {
		out = append(out, Object{KindListenerSet, nn})
	}
	for _, rk := range translator.RouteKinds {
		for nn := range translator.RouteStatusesOf(w.gatewayAPI, rk.Kind()).All() {
			out = append(out, Object{Kind(rk.Kind()), nn})
		}
	}
	out = append(out, w.xObjects()...)
	for o := range w.cleared {
		out = append(out, o)
	}
	return out
}

// cachedDiffers is the compare before queueing: true when o has a desired
// status and the cached object is not known to carry it already; w.mu is
// held.
func (w *Writer) cachedDiffers(o Object) bool {
	if w.opts.Cache == nil {
		return true
	}
	switch o.Kind {
	case KindBackendTLSPolicy:
		desired, ok := w.desired[o.NamespacedName]
		if !ok {
			return false
		}
		live, ok := w.opts.Cache.Policy(o.NamespacedName)
		return !ok || needsWrite(live.Status, desired, w.opts.Controller)
	case KindGatewayClass:
		desired, ok := w.gatewayAPI.GatewayClasses[o.Name]
		if !ok {
			return false
		}
		live, ok := w.opts.Cache.GatewayClass(o.Name)
		return !ok || !equality.Semantic.DeepEqual(live.Status, desired)
	case KindGateway:
		desired, ok := w.gatewayAPI.Gateways[o.NamespacedName]
		if !ok {
			return false
		}
		live, ok := w.opts.Cache.Gateway(o.NamespacedName)
		return !ok || !equality.Semantic.DeepEqual(live.Status, desired)
	case KindListenerSet:
		desired, ok := w.gatewayAPI.ListenerSets[o.NamespacedName]
		if !ok {
			return false
		}
		live, ok := w.opts.Cache.ListenerSet(o.NamespacedName)
		return !ok || !equality.Semantic.DeepEqual(live.Status, desired)
	}
	if differs, ok := w.xCachedDiffers(o); ok {
		return differs
	}
	if rk, ok := translator.RouteKindOf(translator.Kind(o.Kind)); ok {
		desired, ok := w.desiredRoute(o)
		if !ok {
			return false
		}
		live, ok := cachedRoute(w.opts.Cache, rk, o.NamespacedName)
		return !ok || routeNeedsWrite(*rk.RouteStatus(live), desired, w.opts.Controller)
	}
	return false
}

// desiredRoute is a route's desired status: the translator's, or none of
// ours for a cleared route; ok is false when neither applies. w.mu is held.
func (w *Writer) desiredRoute(o Object) (gwv1.RouteStatus, bool) {
	if st, ok := translator.RouteStatusesOf(w.gatewayAPI, translator.Kind(o.Kind)).Get(o.NamespacedName); ok {
		return st, true
	}
	return gwv1.RouteStatus{}, w.cleared[o]
}

func (w *Writer) writeGatewayClass(ctx context.Context, o Object) error {
	w.mu.Lock()
	desired, ok := w.gatewayAPI.GatewayClasses[o.Name]
	w.mu.Unlock()
	if !ok {
		return nil // no longer ours, or gone
	}
	return writeWhole(ctx, w, o, w.opts.Gateway.GatewayV1().GatewayClasses(),
		func(c Cache, nn types.NamespacedName) (*gwv1.GatewayClass, bool) { return c.GatewayClass(nn.Name) },
		func(c *gwv1.GatewayClass) *gwv1.GatewayClassStatus { return &c.Status }, desired)
}

func (w *Writer) writeGateway(ctx context.Context, o Object) error {
	w.mu.Lock()
	desired, ok := w.gatewayAPI.Gateways[o.NamespacedName]
	w.mu.Unlock()
	if !ok {
		return nil
	}
	return writeWhole(ctx, w, o, w.opts.Gateway.GatewayV1().Gateways(o.Namespace), Cache.Gateway,
		func(g *gwv1.Gateway) *gwv1.GatewayStatus { return &g.Status }, desired)
}

func (w *Writer) writeListenerSet(ctx context.Context, o Object) error {
	w.mu.Lock()
	desired, ok := w.gatewayAPI.ListenerSets[o.NamespacedName]
	w.mu.Unlock()
	if !ok {
		return nil
	}
	return writeWhole(ctx, w, o, w.opts.Gateway.GatewayV1().ListenerSets(o.Namespace), Cache.ListenerSet,
		func(s *gwv1.ListenerSet) *gwv1.ListenerSetStatus { return &s.Status }, desired)
}

// writeWhole writes a status that is ours as a whole (a GatewayClass's,
// a Gateway's, a ListenerSet's): desired replaces the live one when they differ. cached
// is the kind's lookup in a Cache, status where a T keeps its S.
func writeWhole[T wholeObject[T], S any](ctx context.Context, w *Writer, o Object, client wholeClient[T],
	cached func(Cache, types.NamespacedName) (T, bool), status func(T) *S, desired S) error {
	var none T
	return writeStatus(ctx, w, o, statusOps[T]{
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
			if equality.Semantic.DeepEqual(*status(live), desired) {
				return none
			}
			updated := live.DeepCopy()
			*status(updated) = desired
			return updated
		},
		update: func(ctx context.Context, obj T) error {
			_, err := client.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
			return err
		},
	})
}

// wholeObject is the object type of a kind whose status is ours as a
// whole.
type wholeObject[T any] interface {
	comparable
	DeepCopy() T
}

// wholeClient is what writeWhole needs of such a kind's typed client.
type wholeClient[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// writeRoute replaces the route's parents of our controller, keeping
// every other controller's; rk is the description of its kind.
func writeRoute(ctx context.Context, w *Writer, o Object, rk translator.RouteKind) error {
	w.mu.Lock()
	desired, ok := w.desiredRoute(o)
	w.mu.Unlock()
	if !ok {
		return nil
	}
	client := routeClientOf(w.opts.Gateway.GatewayV1(), rk, o.Namespace)
	err := writeStatus(ctx, w, o, statusOps[route]{
		cached: func() (route, bool) {
			return cachedRoute(w.opts.Cache, rk, o.NamespacedName)
		},
		get: func(ctx context.Context) (route, error) {
			return client.get(ctx, o.Name)
		},
		merged: func(live route) route {
			if !routeNeedsWrite(*rk.RouteStatus(live), desired, w.opts.Controller) {
				return nil
			}
			updated := live.DeepCopyObject().(route)
			*rk.RouteStatus(updated) = mergeRoute(*rk.RouteStatus(live), desired, w.opts.Controller)
			return updated
		},
		update: client.updateStatus,
	})
	if err == nil {
		w.mu.Lock()
		if _, desiredAgain := translator.RouteStatusesOf(w.gatewayAPI, rk.Kind()).Get(o.NamespacedName); !desiredAgain {
			delete(w.cleared, o) // cleared (or gone): nothing left of ours
		}
		w.mu.Unlock()
	}
	return err
}

// cachedRoute is the route of kind rk namespace/name in c (nil: none).
func cachedRoute(c Cache, rk translator.RouteKind, nn types.NamespacedName) (route, bool) {
	if c == nil {
		return nil, false
	}
	o, ok := c.Route(rk.Kind(), nn)
	r, isRoute := o.(route)
	return r, ok && isRoute && rk.RouteStatus(r) != nil
}
