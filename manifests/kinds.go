package manifests

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
)

// skippedMessage is the end of the warning for a kind tlsplane does not
// read; it lists every entry of kinds.
var skippedMessage = "skipped: tlsplane reads only BackendTLSPolicy, GatewayClass, Gateway, " + routeKindNames() + ", ListenerSet and ReferenceGrant (" +
	"gateway.networking.k8s.io/v1; ReferenceGrant also v1beta1), XBackend, XBackendTrafficPolicy and XMesh (gateway.networking.x-k8s.io/v1alpha1), Service, EndpointSlice, ConfigMap, Secret and Namespace"

// routeKindNames lists every route kind (translator.RouteKinds).
func routeKindNames() string {
	var names []string
	for _, rk := range translator.RouteKinds {
		names = append(names, string(rk.Kind()))
	}
	return strings.Join(names, ", ")
}

type kindKey struct{ apiVersion, kind string }

// kindReader decodes one document of a kind the translator reads into
// Inputs.
type kindReader struct {
	// clusterScoped kinds keep no namespace, whatever the file says, as the
	// API server drops it; namespaced ones get DefaultNamespace when none
	// is given, as kubectl does.
	clusterScoped bool
	read          func(decode func(any) error, namespace string, in *translator.Inputs) error
}

// kinds is every apiVersion and kind the translator reads: those below,
// and every route kind (translator.RouteKinds).
var kinds = withRouteKinds(map[kindKey]kindReader{
	{gwv1.GroupVersion.String(), "BackendTLSPolicy"}: namespaced(func(in *translator.Inputs, o *gwv1.BackendTLSPolicy) {
		in.Policies = append(in.Policies, o)
	}),
	{gwv1.GroupVersion.String(), "GatewayClass"}: clusterScoped(func(in *translator.Inputs, o *gwv1.GatewayClass) {
		in.GatewayClasses = append(in.GatewayClasses, o)
	}),
	{gwv1.GroupVersion.String(), "Gateway"}: namespaced(func(in *translator.Inputs, o *gwv1.Gateway) {
		in.Gateways = append(in.Gateways, o)
	}),
	{gwv1.GroupVersion.String(), "ListenerSet"}: namespaced(func(in *translator.Inputs, o *gwv1.ListenerSet) {
		in.ListenerSets = append(in.ListenerSets, o)
	}),
	{gwv1.GroupVersion.String(), "ReferenceGrant"}: namespaced(func(in *translator.Inputs, o *gwv1.ReferenceGrant) {
		in.ReferenceGrants = append(in.ReferenceGrants, o)
	}),
	// v1beta1 is the ReferenceGrant CRD's storage version and what most
	// manifests still say; its fields are v1's, so it is read as v1.
	{gwv1beta1.GroupVersion.String(), "ReferenceGrant"}: namespaced(func(in *translator.Inputs, o *gwv1.ReferenceGrant) {
		o.APIVersion = gwv1.GroupVersion.String()
		in.ReferenceGrants = append(in.ReferenceGrants, o)
	}),
	{gwxv1a1.GroupVersion.String(), "XBackend"}: namespaced(func(in *translator.Inputs, o *gwxv1a1.XBackend) {
		in.XBackends = append(in.XBackends, o)
	}),
	{gwxv1a1.GroupVersion.String(), "XBackendTrafficPolicy"}: namespaced(func(in *translator.Inputs, o *gwxv1a1.XBackendTrafficPolicy) {
		in.XBackendTrafficPolicies = append(in.XBackendTrafficPolicies, o)
	}),
	{gwxv1a1.GroupVersion.String(), "XMesh"}: clusterScoped(func(in *translator.Inputs, o *gwxv1a1.XMesh) {
		in.XMeshes = append(in.XMeshes, o)
	}),
	{"v1", "Service"}: namespaced(func(in *translator.Inputs, o *corev1.Service) {
		in.Services = append(in.Services, o)
	}),
	{discoveryv1.SchemeGroupVersion.String(), "EndpointSlice"}: namespaced(func(in *translator.Inputs, o *discoveryv1.EndpointSlice) {
		in.EndpointSlices = append(in.EndpointSlices, o)
	}),
	{"v1", "ConfigMap"}: namespaced(func(in *translator.Inputs, o *corev1.ConfigMap) {
		in.ConfigMaps = append(in.ConfigMaps, o)
	}),
	{"v1", "Secret"}: namespaced(func(in *translator.Inputs, o *corev1.Secret) {
		applyStringData(o)
		in.Secrets = append(in.Secrets, o)
	}),
	{"v1", "Namespace"}: clusterScoped(func(in *translator.Inputs, o *corev1.Namespace) {
		in.Namespaces = append(in.Namespaces, o)
	}),
})

// withRouteKinds adds to m every route kind, namespaced, read at the
// version its description names.
func withRouteKinds(m map[kindKey]kindReader) map[kindKey]kindReader {
	for _, rk := range translator.RouteKinds {
		m[kindKey{rk.Resource().GroupVersion().String(), string(rk.Kind())}] = kindReader{read: readWith(rk.New, func(in *translator.Inputs, o metav1.Object) { rk.Add(in, o) })}
	}
	return m
}

// object is a pointer to a Kubernetes object type.
type object[T any] interface {
	*T
	metav1.Object
}

func namespaced[T any, P object[T]](add func(*translator.Inputs, P)) kindReader {
	return kindReader{read: readInto(add)}
}

func clusterScoped[T any, P object[T]](add func(*translator.Inputs, P)) kindReader {
	return kindReader{clusterScoped: true, read: readInto(add)}
}

// readInto reads a new T and hands it to add.
func readInto[T any, P object[T]](add func(*translator.Inputs, P)) func(func(any) error, string, *translator.Inputs) error {
	return readWith(func() metav1.Object { return P(new(T)) }, func(in *translator.Inputs, o metav1.Object) { add(in, o.(P)) })
}

// readWith decodes a newObject, sets its namespace (empty for
// cluster-scoped kinds) and hands it to add.
func readWith(newObject func() metav1.Object, add func(*translator.Inputs, metav1.Object)) func(func(any) error, string, *translator.Inputs) error {
	return func(decode func(any) error, namespace string, in *translator.Inputs) error {
		o := newObject()
		if err := decode(o); err != nil {
			return err
		}
		o.SetNamespace(namespace)
		add(in, o)
		return nil
	}
}

// applyStringData merges stringData into data, as the API server does on
// write, so the translator only reads data.
func applyStringData(s *corev1.Secret) {
	if len(s.StringData) == 0 {
		return
	}
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
}
