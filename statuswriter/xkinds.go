package statuswriter

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
)

// The experimental kinds (GEP-4894): an XBackend's status.parents is
// shared among controllers like a route's, one entry per Gateway whose
// routes reach it; an XBackendTrafficPolicy's status.ancestors like a
// BackendTLSPolicy's. An XMesh's status (cluster-scoped) is ours as a
// whole, like a GatewayClass's: only XMeshes of our controller have one.

// reportX queues the XBackends, XBackendTrafficPolicies and XMeshes whose status
// changed between prev and next; an XBackend no longer in next (no route
// of our Gateways reaches it) is queued to have our entries removed.
// w.mu is held.
func (w *Writer) reportX(prev, next translator.GatewayAPIStatuses, queue func(Object)) {
	diffStatuses(prev.XBackends, next.XBackends, func(nn types.NamespacedName) {
		o := Object{KindXBackend, nn}
		delete(w.cleared, o)
		queue(o)
	}, func(nn types.NamespacedName) {
		o := Object{KindXBackend, nn}
		w.cleared[o] = true
		queue(o)
	})
	diffStatuses(prev.XBackendTrafficPolicies, next.XBackendTrafficPolicies, func(nn types.NamespacedName) {
		queue(Object{KindXBackendTrafficPolicy, nn})
	}, nil)
	diffStatuses(prev.XMeshes, next.XMeshes, func(name string) {
		queue(Object{KindXMesh, types.NamespacedName{Name: name}})
	}, nil)
}

// xObjects is every XBackend, XBackendTrafficPolicy and XMesh with a desired
// status (cleared XBackends are among w.cleared); w.mu is held.
func (w *Writer) xObjects() []Object {
	var out []Object
	for nn := range w.gatewayAPI.XBackends {
		out = append(out, Object{KindXBackend, nn})
	}
	for nn := range w.gatewayAPI.XBackendTrafficPolicies {
		out = append(out, Object{KindXBackendTrafficPolicy, nn})
	}
	for name := range w.gatewayAPI.XMeshes {
		out = append(out, Object{KindXMesh, types.NamespacedName{Name: name}})
	}
	return out
}

// desiredXBackend is an XBackend's desired status: the translator's, or
// none of ours when cleared; ok is false when neither applies. w.mu is
// held.
func (w *Writer) desiredXBackend(o Object) (gwxv1a1.BackendStatus, bool) {
	if st, ok := w.gatewayAPI.XBackends[o.NamespacedName]; ok {
		return st, true
	}
	return gwxv1a1.BackendStatus{}, w.cleared[o]
}

// xCachedDiffers is cachedDiffers of the X-kinds; ok is false for other
// kinds. w.mu is held.
func (w *Writer) xCachedDiffers(o Object) (differs, ok bool) {
	switch o.Kind {
	case KindXBackend:
		desired, ok := w.desiredXBackend(o)
		if !ok {
			return false, true
		}
		live, ok := w.opts.Cache.XBackend(o.NamespacedName)
		return !ok || xBackendNeedsWrite(live.Status, desired, w.opts.Controller), true
	case KindXBackendTrafficPolicy:
		desired, ok := w.gatewayAPI.XBackendTrafficPolicies[o.NamespacedName]
		if !ok {
			return false, true
		}
		live, ok := w.opts.Cache.XBackendTrafficPolicy(o.NamespacedName)
		return !ok || needsWrite(live.Status, desired, w.opts.Controller), true
	case KindXMesh:
		desired, ok := w.gatewayAPI.XMeshes[o.Name]
		if !ok {
			return false, true
		}
		live, ok := w.opts.Cache.XMesh(o.Name)
		return !ok || !equality.Semantic.DeepEqual(live.Status, desired), true
	}
	return false, false
}

// writeXBackend replaces the XBackend's parents of our controller,
// keeping every other controller's.
func (w *Writer) writeXBackend(ctx context.Context, o Object) error {
	w.mu.Lock()
	desired, ok := w.desiredXBackend(o)
	w.mu.Unlock()
	if !ok {
		return nil
	}
	client := w.opts.Gateway.ExperimentalV1alpha1().XBackends(o.Namespace)
	err := writeStatus(ctx, w, o, statusOps[*gwxv1a1.XBackend]{
		cached: func() (*gwxv1a1.XBackend, bool) {
			if w.opts.Cache == nil {
				return nil, false
			}
			return w.opts.Cache.XBackend(o.NamespacedName)
		},
		get: func(ctx context.Context) (*gwxv1a1.XBackend, error) {
			return client.Get(ctx, o.Name, metav1.GetOptions{})
		},
		merged: func(live *gwxv1a1.XBackend) *gwxv1a1.XBackend {
			if !xBackendNeedsWrite(live.Status, desired, w.opts.Controller) {
				return nil
			}
			updated := live.DeepCopy()
			updated.Status = mergeXBackend(live.Status, desired, w.opts.Controller)
			return updated
		},
		update: func(ctx context.Context, obj *gwxv1a1.XBackend) error {
			_, err := client.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
			return err
		},
	})
	if err == nil {
		w.mu.Lock()
		if _, desiredAgain := w.gatewayAPI.XBackends[o.NamespacedName]; !desiredAgain {
			delete(w.cleared, o) // cleared (or gone): nothing left of ours
		}
		w.mu.Unlock()
	}
	return err
}

// writeXBackendTrafficPolicy replaces the policy's ancestors of our
// controller, keeping every other controller's.
func (w *Writer) writeXBackendTrafficPolicy(ctx context.Context, o Object) error {
	w.mu.Lock()
	desired, ok := w.gatewayAPI.XBackendTrafficPolicies[o.NamespacedName]
	w.mu.Unlock()
	if !ok {
		return nil // the policy is gone from the inputs
	}
	client := w.opts.Gateway.ExperimentalV1alpha1().XBackendTrafficPolicies(o.Namespace)
	return writeStatus(ctx, w, o, statusOps[*gwxv1a1.XBackendTrafficPolicy]{
		cached: func() (*gwxv1a1.XBackendTrafficPolicy, bool) {
			if w.opts.Cache == nil {
				return nil, false
			}
			return w.opts.Cache.XBackendTrafficPolicy(o.NamespacedName)
		},
		get: func(ctx context.Context) (*gwxv1a1.XBackendTrafficPolicy, error) {
			return client.Get(ctx, o.Name, metav1.GetOptions{})
		},
		merged: func(live *gwxv1a1.XBackendTrafficPolicy) *gwxv1a1.XBackendTrafficPolicy {
			if !needsWrite(live.Status, desired, w.opts.Controller) {
				return nil
			}
			updated := live.DeepCopy()
			updated.Status = merge(live.Status, desired, w.opts.Controller)
			return updated
		},
		update: func(ctx context.Context, obj *gwxv1a1.XBackendTrafficPolicy) error {
			_, err := client.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
			return err
		},
	})
}

// writeXMesh replaces the status of an XMesh of ours.
func (w *Writer) writeXMesh(ctx context.Context, o Object) error {
	w.mu.Lock()
	desired, ok := w.gatewayAPI.XMeshes[o.Name]
	w.mu.Unlock()
	if !ok {
		return nil // no longer ours, or gone
	}
	return writeWhole(ctx, w, o, w.opts.Gateway.ExperimentalV1alpha1().XMeshes(),
		func(c Cache, nn types.NamespacedName) (*gwxv1a1.XMesh, bool) { return c.XMesh(nn.Name) },
		func(m *gwxv1a1.XMesh) *gwxv1a1.MeshStatus { return &m.Status }, desired)
}

// xBackendNeedsWrite is needsWrite for an XBackend's parents.
func xBackendNeedsWrite(live, desired gwxv1a1.BackendStatus, controller gwv1.GatewayController) bool {
	return routeNeedsWrite(asRouteStatus(live), asRouteStatus(desired), controller)
}

// mergeXBackend is mergeRoute for an XBackend's parents: the same limit
// of 32, other controllers' entries kept in place.
func mergeXBackend(live, desired gwxv1a1.BackendStatus, controller gwv1.GatewayController) gwxv1a1.BackendStatus {
	merged := mergeRoute(asRouteStatus(live), asRouteStatus(desired), controller)
	out := gwxv1a1.BackendStatus{Ancestors: make([]gwxv1a1.BackendAncestorStatus, len(merged.Parents))}
	for i, p := range merged.Parents {
		out.Ancestors[i] = gwxv1a1.BackendAncestorStatus{ControllerName: p.ControllerName, AncestorRef: p.ParentRef, Conditions: p.Conditions}
	}
	return out
}

// asRouteStatus is an XBackend's parents as a route's: the same three
// fields (controllerName, parentRef, conditions), so the route's compare
// and merge serve both.
func asRouteStatus(st gwxv1a1.BackendStatus) gwv1.RouteStatus {
	out := gwv1.RouteStatus{Parents: make([]gwv1.RouteParentStatus, len(st.Ancestors))}
	for i, a := range st.Ancestors {
		out.Parents[i] = gwv1.RouteParentStatus{ControllerName: a.ControllerName, ParentRef: a.AncestorRef, Conditions: a.Conditions}
	}
	return out
}
