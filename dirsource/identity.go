package dirsource

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/input"
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
// order of Inputs' fields (input.ObjectKinds), each kind in its given
// order.
func keyedObjects(in translator.Inputs) []keyed {
	var all []keyed
	for _, k := range input.ObjectKinds {
		for _, o := range k.Objects(&in) {
			all = append(all, keyed{objectKey{k.Kind(), types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}}, o})
		}
	}
	return all
}
