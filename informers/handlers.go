package informers

import (
	"maps"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/tlsplane/tlsplane/translator"
)

// Kinds, as the metrics and logs name them; a route kind is named by its
// description (translator.RouteKinds).
const (
	kindPolicy        = "BackendTLSPolicy"
	kindService       = "Service"
	kindEndpointSlice = "EndpointSlice"
	kindConfigMap     = "ConfigMap"
	kindSecret        = "Secret"

	kindGatewayClass   = "GatewayClass"
	kindGateway        = "Gateway"
	kindListenerSet    = "ListenerSet"
	kindReferenceGrant = "ReferenceGrant"
	kindNamespace      = "Namespace"

	kindXBackend              = string(translator.KindXBackend)
	kindXBackendTrafficPolicy = string(translator.KindXBackendTrafficPolicy)
	kindXMesh                 = string(translator.KindXMesh)
)

// handlerFor returns the event handler of one kind's informer.
func (s *Source) handlerFor(kind string) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.event(kind, nil, obj) },
		UpdateFunc: func(old, obj any) { s.event(kind, old, obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			s.event(kind, obj, nil)
		},
	}
}

// event decides whether one add (old nil), update or delete (obj nil) can
// change a translation, and if so signals it.
func (s *Source) event(kind string, old, obj any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		return // before sync: the first translation reads everything anyway
	}
	if old != nil && obj != nil {
		switch changeOf(old, obj, statusKinds[kind]) {
		case changedBookkeeping:
			s.metrics.events.WithLabelValues(kind, "ignored").Inc()
			return
		case changedStatus:
			s.statusUpdate(kind, old, obj)
			return
		}
	}
	if kind == kindPolicy || kind == kindGateway || kind == kindListenerSet || kind == kindXBackend {
		// Any policy, Gateway, ListenerSet or XBackend event may add or
		// drop references.
		if m, ok := obj.(metav1.Object); ok {
			s.refs.hold(kind, m, s.recordRef)
		} else if m, ok := old.(metav1.Object); ok {
			s.refs.release(kind, m, s.recordRef)
		}
	}
	if !s.relevant(kind, old, obj) {
		s.metrics.events.WithLabelValues(kind, "ignored").Inc()
		return
	}
	s.metrics.events.WithLabelValues(kind, "translated").Inc()
	s.recordEvent(kind, old, obj)
	if obj != nil {
		s.notifyStatus(kind, obj, false)
	}
	s.changed()
}

// relevant decides for an add, a delete, or an update that changed more
// than bookkeeping and, for the kinds whose status is ours, the status.
func (s *Source) relevant(kind string, old, obj any) bool {
	switch kind {
	case kindConfigMap:
		return s.refs.configMaps[nameOfAny(old)] > 0 || s.refs.configMaps[nameOfAny(obj)] > 0
	case kindSecret:
		return s.refs.secrets[nameOfAny(old)] > 0 || s.refs.secrets[nameOfAny(obj)] > 0
	case kindNamespace:
		// allowedRoutes selectors read labels only.
		return old == nil || obj == nil || !maps.Equal(labelsOfAny(old), labelsOfAny(obj))
	default:
		// Every policy, Service, EndpointSlice and Gateway API object is
		// translated, and a Service's status (its load balancer) too.
		return true
	}
}

// contentChange is what an update changed.
type contentChange int

const (
	// changedBookkeeping: resourceVersion, managedFields, nothing else.
	changedBookkeeping contentChange = iota
	// changedStatus: the status, and maybe bookkeeping.
	changedStatus
	// changedMore: the spec, metadata such as labels, or anything else.
	changedMore
)

// changeOf says what an update from old to obj changed; a status change
// is told apart only when withStatus is set, else it is changedMore.
func changeOf(old, obj any, withStatus bool) contentChange {
	a, aok := old.(runtime.Object)
	b, bok := obj.(runtime.Object)
	if !aok || !bok {
		return changedMore
	}
	a, b = a.DeepCopyObject(), b.DeepCopyObject()
	for _, o := range []runtime.Object{a, b} {
		if m, ok := o.(metav1.Object); ok {
			m.SetResourceVersion("")
			m.SetManagedFields(nil)
		}
	}
	if equality.Semantic.DeepEqual(a, b) {
		return changedBookkeeping
	}
	if withStatus && clearStatus(a) && clearStatus(b) && equality.Semantic.DeepEqual(a, b) {
		return changedStatus
	}
	return changedMore
}

// sameContent reports whether an update changed nothing but bookkeeping
// (resourceVersion, managedFields), e.g. a relist or a no-op apply.
func sameContent(old, obj any) bool {
	return changeOf(old, obj, false) == changedBookkeeping
}

// clearStatus zeroes the Status field of a pointer to an API object;
// false when it has none.
func clearStatus(obj runtime.Object) bool {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return false
	}
	f := v.Elem().FieldByName("Status")
	if !f.IsValid() || !f.CanSet() {
		return false
	}
	f.SetZero()
	return true
}

func labelsOfAny(obj any) map[string]string {
	if m, ok := obj.(metav1.Object); ok {
		return m.GetLabels()
	}
	return nil
}

func nameOfAny(obj any) types.NamespacedName {
	if m, ok := obj.(metav1.Object); ok {
		return types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}
	}
	return types.NamespacedName{}
}
