package translator

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
)

// objectIndex finds inputs by namespace/name in constant time, so that a
// translation stays linear in the number of objects.
type objectIndex struct {
	services   map[types.NamespacedName]*corev1.Service
	configMaps map[types.NamespacedName]*corev1.ConfigMap
	secrets    map[types.NamespacedName]*corev1.Secret
	// slicesByService groups EndpointSlices by the Service named in their
	// kubernetes.io/service-name label.
	slicesByService map[types.NamespacedName][]*discoveryv1.EndpointSlice
}

func newObjectIndex(in Inputs) *objectIndex {
	ix := &objectIndex{
		services:        make(map[types.NamespacedName]*corev1.Service, len(in.Services)),
		configMaps:      make(map[types.NamespacedName]*corev1.ConfigMap, len(in.ConfigMaps)),
		secrets:         make(map[types.NamespacedName]*corev1.Secret, len(in.Secrets)),
		slicesByService: make(map[types.NamespacedName][]*discoveryv1.EndpointSlice),
	}
	for _, s := range in.Services {
		ix.services[nameOf(s.Namespace, s.Name)] = s
	}
	for _, c := range in.ConfigMaps {
		ix.configMaps[nameOf(c.Namespace, c.Name)] = c
	}
	for _, s := range in.Secrets {
		ix.secrets[nameOf(s.Namespace, s.Name)] = s
	}
	for _, es := range in.EndpointSlices {
		svc, ok := es.Labels[discoveryv1.LabelServiceName]
		if !ok {
			continue
		}
		key := nameOf(es.Namespace, svc)
		ix.slicesByService[key] = append(ix.slicesByService[key], es)
	}
	return ix
}

// nameOf is the key of a namespaced object; an empty namespace is `default`,
// as kubectl would create it.
func nameOf(namespace, name string) types.NamespacedName {
	if namespace == "" {
		namespace = "default"
	}
	return types.NamespacedName{Namespace: namespace, Name: name}
}
