package statuswriter

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1client "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/typed/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// ReportGatewayAPI records the desired GatewayClass, Gateway, ListenerSet,
// HTTPRoute, GRPCRoute, TLSRoute, TCPRoute and UDPRoute statuses and queues those that changed
// since the last report and differ from the cached live objects. A route
// that carried parents of ours and is no longer in the statuses (its
// parentRefs left our Gateways) is queued to have them removed.
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
	for kind, rk := range routeKinds {
		rk.diff(prev, statuses, func(nn types.NamespacedName) {
			o := Object{kind, nn}
			delete(w.clearedRoutes, o)
			queue(o)
		}, func(nn types.NamespacedName) {
			o := Object{kind, nn}
			w.clearedRoutes[o] = true
			queue(o)
		})
	}
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
	for kind, rk := range routeKinds {
		rk.each(w.gatewayAPI, func(nn types.NamespacedName) { out = append(out, Object{kind, nn}) })
	}
	for o := range w.clearedRoutes {
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
	if rk, ok := routeKinds[o.Kind]; ok {
		desired, ok := w.desiredRoute(o)
		if !ok {
			return false
		}
		live, ok := rk.cached(w.opts.Cache, o.NamespacedName)
		return !ok || routeNeedsWrite(live, desired, w.opts.Controller)
	}
	return false
}

// desiredRoute is a route's desired status: the translator's, or none of
// ours for a cleared route; ok is false when neither applies. w.mu is held.
func (w *Writer) desiredRoute(o Object) (gwv1.RouteStatus, bool) {
	if rk, ok := routeKinds[o.Kind]; ok {
		return w.desiredOfKind(o, rk.desired)
	}
	return gwv1.RouteStatus{}, false
}

// desiredOfKind is desiredRoute, given o's kind's lookup among the
// translator's statuses; w.mu is held.
func (w *Writer) desiredOfKind(o Object, desired func(translator.GatewayAPIStatuses, types.NamespacedName) (gwv1.RouteStatus, bool)) (gwv1.RouteStatus, bool) {
	if st, ok := desired(w.gatewayAPI, o.NamespacedName); ok {
		return st, true
	}
	return gwv1.RouteStatus{}, w.clearedRoutes[o]
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
func writeWhole[T routeObject[T], S any](ctx context.Context, w *Writer, o Object, client routeClient[T],
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

// routeKind is how the writer reaches the live and the desired routes of
// one kind.
type routeKind struct {
	// cached is a route's live status in a Cache.
	cached func(Cache, types.NamespacedName) (gwv1.RouteStatus, bool)
	// write is writeRoute for the kind.
	write func(context.Context, *Writer, Object) error
	// desired is a route's status among the translator's.
	desired func(translator.GatewayAPIStatuses, types.NamespacedName) (gwv1.RouteStatus, bool)
	// each calls f with every route of the kind among the translator's.
	each func(st translator.GatewayAPIStatuses, f func(types.NamespacedName))
	// diff is diffStatuses of the kind's routes.
	diff func(prev, next translator.GatewayAPIStatuses, changed, gone func(types.NamespacedName))
}

// routeKinds are the route kinds whose parents of ours the writer writes.
var routeKinds = map[Kind]routeKind{
	KindHTTPRoute: routeKindOf(Cache.HTTPRoute, gwv1client.GatewayV1Interface.HTTPRoutes,
		func(r *gwv1.HTTPRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus },
		func(st translator.GatewayAPIStatuses) map[types.NamespacedName]gwv1.HTTPRouteStatus {
			return st.HTTPRoutes
		},
		func(s gwv1.HTTPRouteStatus) gwv1.RouteStatus { return s.RouteStatus }),
	KindGRPCRoute: routeKindOf(Cache.GRPCRoute, gwv1client.GatewayV1Interface.GRPCRoutes,
		func(r *gwv1.GRPCRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus },
		func(st translator.GatewayAPIStatuses) map[types.NamespacedName]gwv1.GRPCRouteStatus {
			return st.GRPCRoutes
		},
		func(s gwv1.GRPCRouteStatus) gwv1.RouteStatus { return s.RouteStatus }),
	KindTLSRoute: routeKindOf(Cache.TLSRoute, gwv1client.GatewayV1Interface.TLSRoutes,
		func(r *gwv1.TLSRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus },
		func(st translator.GatewayAPIStatuses) map[types.NamespacedName]gwv1.TLSRouteStatus {
			return st.TLSRoutes
		},
		func(s gwv1.TLSRouteStatus) gwv1.RouteStatus { return s.RouteStatus }),
	KindTCPRoute: routeKindOf(Cache.TCPRoute, gwv1client.GatewayV1Interface.TCPRoutes,
		func(r *gwv1.TCPRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus },
		func(st translator.GatewayAPIStatuses) map[types.NamespacedName]gwv1.TCPRouteStatus {
			return st.TCPRoutes
		},
		func(s gwv1.TCPRouteStatus) gwv1.RouteStatus { return s.RouteStatus }),
	KindUDPRoute: routeKindOf(Cache.UDPRoute, gwv1client.GatewayV1Interface.UDPRoutes,
		func(r *gwv1.UDPRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus },
		func(st translator.GatewayAPIStatuses) map[types.NamespacedName]gwv1.UDPRouteStatus {
			return st.UDPRoutes
		},
		func(s gwv1.UDPRouteStatus) gwv1.RouteStatus { return s.RouteStatus }),
}

// routeKindOf is the routeKind of T: cached is its lookup in a Cache,
// client its typed client in a namespace, status where a T keeps its
// RouteStatus; statuses are the kind's among the translator's, and route
// where one of them (an S) keeps its RouteStatus.
func routeKindOf[T routeObject[T], C routeClient[T], S any](cached func(Cache, types.NamespacedName) (T, bool),
	client func(gwv1client.GatewayV1Interface, string) C, status func(T) *gwv1.RouteStatus,
	statuses func(translator.GatewayAPIStatuses) map[types.NamespacedName]S, route func(S) gwv1.RouteStatus) routeKind {
	desired := func(st translator.GatewayAPIStatuses, nn types.NamespacedName) (gwv1.RouteStatus, bool) {
		s, ok := statuses(st)[nn]
		return route(s), ok
	}
	return routeKind{
		desired: desired,
		each: func(st translator.GatewayAPIStatuses, f func(types.NamespacedName)) {
			for nn := range statuses(st) {
				f(nn)
			}
		},
		diff: func(prev, next translator.GatewayAPIStatuses, changed, gone func(types.NamespacedName)) {
			diffStatuses(statuses(prev), statuses(next), changed, gone)
		},
		cached: func(c Cache, nn types.NamespacedName) (gwv1.RouteStatus, bool) {
			r, ok := cached(c, nn)
			if !ok {
				return gwv1.RouteStatus{}, false
			}
			return *status(r), true
		},
		write: func(ctx context.Context, w *Writer, o Object) error {
			return writeRoute(ctx, w, o, client(w.opts.Gateway.GatewayV1(), o.Namespace), cached, status, desired)
		},
	}
}

// routeObject is a route kind's object type.
type routeObject[T any] interface {
	comparable
	DeepCopy() T
}

// routeClient is what writeRoute needs of a route kind's typed client.
type routeClient[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// writeRoute replaces the route's parents of our controller, keeping
// every other controller's. cached is its kind's lookup in a Cache; status
// is where a T keeps its RouteStatus; desiredOf its kind's lookup among the
// translator's statuses.
func writeRoute[T routeObject[T]](ctx context.Context, w *Writer, o Object, client routeClient[T], cached func(Cache, types.NamespacedName) (T, bool),
	status func(T) *gwv1.RouteStatus, desiredOf func(translator.GatewayAPIStatuses, types.NamespacedName) (gwv1.RouteStatus, bool)) error {
	w.mu.Lock()
	desired, ok := w.desiredOfKind(o, desiredOf)
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
		if _, desiredAgain := desiredOf(w.gatewayAPI, o.NamespacedName); !desiredAgain {
			delete(w.clearedRoutes, o) // cleared (or gone): nothing left of ours
		}
		w.mu.Unlock()
	}
	return err
}
