package dirsource

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// forgetResourceVersions clears the resourceVersion of every object read
// from a file. The translator takes the same UID at the same
// resourceVersion as the API server's promise that an object did not
// change; a manifest saved with `kubectl get -o yaml` keeps both through
// every edit, so trusting them would serve the object as it was. Objects
// from files are the same only when they are the same pointer, which the
// source keeps for files whose bytes did not change.
func forgetResourceVersions(in translator.Inputs) {
	for _, o := range objects(in) {
		o.SetResourceVersion("")
	}
}

// count is the number of objects in in.
func count(in translator.Inputs) int {
	return len(objects(in))
}

// objects lists every object of in, of every kind the translator reads.
func objects(in translator.Inputs) []metav1.Object {
	var all []metav1.Object
	all = appendObjects(all, in.Policies)
	all = appendObjects(all, in.Services)
	all = appendObjects(all, in.EndpointSlices)
	all = appendObjects(all, in.ConfigMaps)
	all = appendObjects(all, in.Secrets)
	all = appendObjects(all, in.GatewayClasses)
	all = appendObjects(all, in.Gateways)
	all = appendObjects(all, in.HTTPRoutes)
	all = appendObjects(all, in.ReferenceGrants)
	all = appendObjects(all, in.Namespaces)
	return all
}

func appendObjects[T metav1.Object](all []metav1.Object, objs []T) []metav1.Object {
	for _, o := range objs {
		all = append(all, o)
	}
	return all
}
