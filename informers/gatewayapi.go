package informers

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwlisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// The Gateway API kinds' lists: empty when the kind is not served.

func (v *view) gatewayClasses() []*gwv1.GatewayClass {
	if v.classLister == nil {
		return nil
	}
	l, _ := v.classLister.List(labels.Everything())
	return l
}

func (v *view) gateways() []*gwv1.Gateway {
	return listServed(v, func(s *scope) lister[*gwv1.Gateway] { return s.gateways })
}

func (v *view) listenerSets() []*gwv1.ListenerSet {
	return listServed(v, func(s *scope) lister[*gwv1.ListenerSet] { return s.listenerSets })
}

// routes are the objects of route kind k (empty when it is not served),
// each of k's type.
func (v *view) routes(k translator.Kind) []runtime.Object {
	return listAll(v, func(s *scope) ([]runtime.Object, error) {
		l, ok := s.routes[k]
		if !ok {
			return nil, nil
		}
		return l.List(labels.Everything())
	})
}

// lister is what listServed needs of one kind's lister.
type lister[T any] interface {
	List(labels.Selector) ([]T, error)
}

// listServed concatenates an optional kind's objects over every scope;
// of returns nil (its lister is nil) where the kind is not served.
func listServed[T any](v *view, of func(*scope) lister[T]) []T {
	return listAll(v, func(s *scope) ([]T, error) {
		l := of(s)
		if l == nil {
			return nil, nil
		}
		return l.List(labels.Everything())
	})
}

// referenceGrants are v1 objects whichever version is read: v1beta1's
// ReferenceGrant is declared as the v1 type, so the conversion copies
// nothing.
func (v *view) referenceGrants() []*gwv1.ReferenceGrant {
	return listAll(v, func(s *scope) ([]*gwv1.ReferenceGrant, error) {
		switch {
		case s.grantsV1 != nil:
			return s.grantsV1.List(labels.Everything())
		case s.grantsV1beta1 != nil:
			l, err := s.grantsV1beta1.List(labels.Everything())
			out := make([]*gwv1.ReferenceGrant, len(l))
			for i, g := range l {
				out[i] = (*gwv1.ReferenceGrant)(g)
			}
			return out, err
		}
		return nil, nil
	})
}

func (v *view) namespaceList() []*corev1.Namespace {
	if v.namespaceLister == nil {
		return nil
	}
	l, _ := v.namespaceLister.List(labels.Everything())
	return l
}

// GatewayClass returns the cached GatewayClass, for the status writer's
// compare before writing.
func (s *Source) GatewayClass(name string) (*gwv1.GatewayClass, bool) {
	v := s.ready()
	if v == nil || v.classLister == nil {
		return nil, false
	}
	c, err := v.classLister.Get(name)
	return c, err == nil
}

// Gateway returns the cached Gateway namespace/name.
func (s *Source) Gateway(nn types.NamespacedName) (*gwv1.Gateway, bool) {
	return cached(s, nn, func(sc *scope) gwlisters.GatewayLister { return sc.gateways }, gwlisters.GatewayLister.Gateways)
}

// ListenerSet returns the cached ListenerSet namespace/name.
func (s *Source) ListenerSet(nn types.NamespacedName) (*gwv1.ListenerSet, bool) {
	return cached(s, nn, func(sc *scope) gwlisters.ListenerSetLister { return sc.listenerSets }, gwlisters.ListenerSetLister.ListenerSets)
}

// Route returns the cached route of kind (a translator.RouteKinds kind)
// namespace/name, of its kind's type.
func (s *Source) Route(kind translator.Kind, nn types.NamespacedName) (runtime.Object, bool) {
	return cached(s, nn, func(sc *scope) cache.GenericLister { return sc.routes[kind] }, cache.GenericLister.ByNamespace)
}

// getter is what cached needs of one kind's namespace lister.
type getter[T any] interface {
	Get(name string) (T, error)
}

// cached looks namespace/name up in the synced view's scope of its
// namespace: lister is the kind's lister there, nil where the kind is not
// served, and in its lister of one namespace.
func cached[T any, L comparable, N getter[T]](s *Source, nn types.NamespacedName, lister func(*scope) L, in func(L, string) N) (T, bool) {
	var none T
	var unserved L
	sc := s.scopeOf(nn.Namespace)
	if sc == nil {
		return none, false
	}
	l := lister(sc)
	if l == unserved {
		return none, false
	}
	o, err := in(l, nn.Namespace).Get(nn.Name)
	return o, err == nil
}
