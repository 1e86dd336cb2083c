package dirsource

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
)

// forgetResourceVersions clears the resourceVersion of every object read
// from a file. The translator takes the same UID at the same
// resourceVersion as the API server's promise that an object did not
// change; a manifest saved with `kubectl get -o yaml` keeps both through
// every edit, so trusting them would serve the object as it was. Objects
// from files are the same only when they are the same pointer, which the
// source keeps for as long as what a file says of an object does not
// change (see keepUnchanged).
func forgetResourceVersions(in translator.Inputs) {
	for _, o := range objects(in) {
		o.SetResourceVersion("")
	}
}

// count is the number of objects in in.
func count(in translator.Inputs) int {
	return len(objects(in))
}

// keyed is one object with the key it is served under.
type keyed struct {
	key    objectKey
	object metav1.Object
}

// objects lists every object of in, of every kind the translator reads.
func objects(in translator.Inputs) []metav1.Object {
	var all []metav1.Object
	for _, k := range keyedObjects(in) {
		all = append(all, k.object)
	}
	return all
}

// keyedObjects lists every object of in with its key, kind by kind in the
// order of Inputs' fields, each kind in its given order.
func keyedObjects(in translator.Inputs) []keyed {
	var all []keyed
	all = appendKeyed(all, translator.KindBackendTLSPolicy, in.Policies)
	all = appendKeyed(all, translator.KindService, in.Services)
	all = appendKeyed(all, translator.KindEndpointSlice, in.EndpointSlices)
	all = appendKeyed(all, translator.KindConfigMap, in.ConfigMaps)
	all = appendKeyed(all, translator.KindSecret, in.Secrets)
	all = appendKeyed(all, translator.KindGatewayClass, in.GatewayClasses)
	all = appendKeyed(all, translator.KindGateway, in.Gateways)
	all = appendKeyed(all, translator.KindHTTPRoute, in.HTTPRoutes)
	all = appendKeyed(all, translator.KindGRPCRoute, in.GRPCRoutes)
	all = appendKeyed(all, translator.KindTLSRoute, in.TLSRoutes)
	all = appendKeyed(all, translator.KindTCPRoute, in.TCPRoutes)
	all = appendKeyed(all, translator.KindListenerSet, in.ListenerSets)
	all = appendKeyed(all, translator.KindUDPRoute, in.UDPRoutes)
	all = appendKeyed(all, translator.KindReferenceGrant, in.ReferenceGrants)
	all = appendKeyed(all, translator.KindNamespace, in.Namespaces)
	return all
}

func appendKeyed[T metav1.Object](all []keyed, kind translator.Kind, objs []T) []keyed {
	for _, o := range objs {
		all = append(all, keyed{objectKey{kind, types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}}, o})
	}
	return all
}
