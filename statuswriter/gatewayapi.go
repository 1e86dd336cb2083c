package statuswriter

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// ReportGatewayAPI records the desired GatewayClass, Gateway and HTTPRoute
// statuses and queues those that differ from the cached live objects. A
// route that carried parents of ours and is no longer in the statuses
// (its parentRefs left our Gateways) is queued to have them removed.
func (w *Writer) ReportGatewayAPI(statuses translator.GatewayAPIStatuses) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for nn := range w.gatewayAPI.HTTPRoutes {
		if _, still := statuses.HTTPRoutes[nn]; !still {
			w.clearedRoutes[nn] = true
		}
	}
	for nn := range statuses.HTTPRoutes {
		delete(w.clearedRoutes, nn)
	}
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
	for nn := range w.clearedRoutes {
		out = append(out, Object{KindHTTPRoute, nn})
	}
	return out
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
		desired, _ := w.desiredRoute(o.NamespacedName)
		return !ok || routeNeedsWrite(live.Status, desired, w.opts.Controller)
	}
	return true
}

// desiredRoute is a route's desired status: the translator's, or none of
// ours for a cleared route; ok is false when neither applies. w.mu is held.
func (w *Writer) desiredRoute(nn types.NamespacedName) (gwv1.HTTPRouteStatus, bool) {
	if st, ok := w.gatewayAPI.HTTPRoutes[nn]; ok {
		return st, true
	}
	return gwv1.HTTPRouteStatus{}, w.clearedRoutes[nn]
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

// writeHTTPRoute replaces the route's parents of our controller, keeping
// every other controller's.
func (w *Writer) writeHTTPRoute(ctx context.Context, o Object) error {
	w.mu.Lock()
	desired, ok := w.desiredRoute(o.NamespacedName)
	w.mu.Unlock()
	if !ok {
		return nil
	}
	client := w.opts.Gateway.GatewayV1().HTTPRoutes(o.Namespace)
	err := writeStatus(ctx, w, o, statusOps[*gwv1.HTTPRoute]{
		cached: func() (*gwv1.HTTPRoute, bool) {
			if w.opts.Cache == nil {
				return nil, false
			}
			return w.opts.Cache.HTTPRoute(o.NamespacedName)
		},
		get: func(ctx context.Context) (*gwv1.HTTPRoute, error) {
			return client.Get(ctx, o.Name, metav1.GetOptions{})
		},
		merged: func(live *gwv1.HTTPRoute) *gwv1.HTTPRoute {
			if !routeNeedsWrite(live.Status, desired, w.opts.Controller) {
				return nil
			}
			updated := live.DeepCopy()
			updated.Status = mergeRoute(live.Status, desired, w.opts.Controller)
			return updated
		},
		update: func(ctx context.Context, obj *gwv1.HTTPRoute) error {
			_, err := client.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
			return err
		},
	})
	if err == nil {
		w.mu.Lock()
		if _, desiredAgain := w.gatewayAPI.HTTPRoutes[o.NamespacedName]; !desiredAgain {
			delete(w.clearedRoutes, o.NamespacedName) // cleared (or gone): nothing left of ours
		}
		w.mu.Unlock()
	}
	return err
}
