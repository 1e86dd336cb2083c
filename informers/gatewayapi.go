package informers

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
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
	return listAll(v, func(s *scope) ([]*gwv1.Gateway, error) {
		if s.gateways == nil {
			return nil, nil
		}
		return s.gateways.List(labels.Everything())
	})
}

func (v *view) httpRoutes() []*gwv1.HTTPRoute {
	return listAll(v, func(s *scope) ([]*gwv1.HTTPRoute, error) {
		if s.httpRoutes == nil {
			return nil, nil
		}
		return s.httpRoutes.List(labels.Everything())
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
	sc := s.scopeOf(nn.Namespace)
	if sc == nil || sc.gateways == nil {
		return nil, false
	}
	g, err := sc.gateways.Gateways(nn.Namespace).Get(nn.Name)
	return g, err == nil
}

// HTTPRoute returns the cached HTTPRoute namespace/name.
func (s *Source) HTTPRoute(nn types.NamespacedName) (*gwv1.HTTPRoute, bool) {
	sc := s.scopeOf(nn.Namespace)
	if sc == nil || sc.httpRoutes == nil {
		return nil, false
	}
	r, err := sc.httpRoutes.HTTPRoutes(nn.Namespace).Get(nn.Name)
	return r, err == nil
}
