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
	forget := func(o metav1.Object) { o.SetResourceVersion("") }
	for _, o := range in.Policies {
		forget(o)
	}
	for _, o := range in.Services {
		forget(o)
	}
	for _, o := range in.EndpointSlices {
		forget(o)
	}
	for _, o := range in.ConfigMaps {
		forget(o)
	}
	for _, o := range in.Secrets {
		forget(o)
	}
}
