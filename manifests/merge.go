package manifests

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// Part is the objects of one source file.
type Part struct {
	Source string
	Inputs translator.Inputs
}

// Merge joins parts in order. An object (kind, namespace, name) defined in
// two parts is kept from the first, with a warning naming both sources, so
// the translator never sees two objects with one name. Cluster-scoped
// objects (GatewayClass, Namespace) have an empty namespace, so their key is
// the name alone.
func Merge(parts []Part, warn func(string)) translator.Inputs {
	if warn == nil {
		warn = func(string) {}
	}
	var out translator.Inputs
	m := merger{owner: map[[3]string]string{}, warn: warn}
	for _, p := range parts {
		in, src := p.Inputs, p.Source
		mergeKind(m, "BackendTLSPolicy", src, &out.Policies, in.Policies)
		mergeKind(m, "Service", src, &out.Services, in.Services)
		mergeKind(m, "EndpointSlice", src, &out.EndpointSlices, in.EndpointSlices)
		mergeKind(m, "ConfigMap", src, &out.ConfigMaps, in.ConfigMaps)
		mergeKind(m, "Secret", src, &out.Secrets, in.Secrets)
		mergeKind(m, "GatewayClass", src, &out.GatewayClasses, in.GatewayClasses)
		mergeKind(m, "Gateway", src, &out.Gateways, in.Gateways)
		mergeKind(m, "HTTPRoute", src, &out.HTTPRoutes, in.HTTPRoutes)
		mergeKind(m, "GRPCRoute", src, &out.GRPCRoutes, in.GRPCRoutes)
		mergeKind(m, "TLSRoute", src, &out.TLSRoutes, in.TLSRoutes)
		mergeKind(m, "TCPRoute", src, &out.TCPRoutes, in.TCPRoutes)
		mergeKind(m, "ListenerSet", src, &out.ListenerSets, in.ListenerSets)
		mergeKind(m, "UDPRoute", src, &out.UDPRoutes, in.UDPRoutes)
		mergeKind(m, "ReferenceGrant", src, &out.ReferenceGrants, in.ReferenceGrants)
		mergeKind(m, "Namespace", src, &out.Namespaces, in.Namespaces)
	}
	return out
}

// merger remembers which source defined each (kind, namespace, name).
type merger struct {
	owner map[[3]string]string
	warn  func(string)
}

// mergeKind appends the objects of one kind from source whose key no
// earlier source defined.
func mergeKind[T metav1.Object](m merger, kind, source string, dst *[]T, src []T) {
	for _, o := range src {
		k := [3]string{kind, o.GetNamespace(), o.GetName()}
		if first, dup := m.owner[k]; dup {
			m.warn(fmt.Sprintf("%s: %s %s ignored: already defined in %s", source, kind, qualified(o), first))
			continue
		}
		m.owner[k] = source
		*dst = append(*dst, o)
	}
}

// qualified is namespace/name, or the name alone for a cluster-scoped object.
func qualified(o metav1.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}
