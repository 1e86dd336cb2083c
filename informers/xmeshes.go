package informers

import (
	"k8s.io/apimachinery/pkg/labels"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
)

// The experimental XMesh (GEP-3949): cluster-scoped like GatewayClass,
// read cluster-wide whatever the namespaces, optional like the other
// X-kinds (an empty list when its CRD is not installed).

func (v *view) xMeshes() []*gwxv1a1.XMesh {
	if v.xMeshLister == nil {
		return nil
	}
	l, _ := v.xMeshLister.List(labels.Everything())
	return l
}

// XMesh returns the cached XMesh name, for the status writer's compare
// before writing.
func (s *Source) XMesh(name string) (*gwxv1a1.XMesh, bool) {
	v := s.ready()
	if v == nil || v.xMeshLister == nil {
		return nil, false
	}
	m, err := v.xMeshLister.Get(name)
	return m, err == nil
}
