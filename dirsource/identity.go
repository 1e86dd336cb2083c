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
func forgetResourceVersions(in *translator.Inputs) {
	for _, k := range input.ObjectKinds {
		for i := range k.Len(in) {
			k.At(in, i).SetResourceVersion("")
		}
	}
}

// count is the number of objects in in.
func count(in *translator.Inputs) int {
	n := 0
	for _, k := range input.ObjectKinds {
		n += k.Len(in)
	}
	return n
}

// keyed is one object with the key it is served under.
type keyed struct {
	key    objectKey
	object metav1.Object
}

// eachKeyed calls f with every object of in and its key, kind by kind in
// the order of Inputs' fields (input.ObjectKinds), each kind in its given
// order.
func eachKeyed(in *translator.Inputs, f func(keyed)) {
	for _, k := range input.ObjectKinds {
		for i := range k.Len(in) {
			o := k.At(in, i)
			f(keyed{objectKey{k.Kind(), types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}}, o})
		}
	}
}

// keyedObjects lists what eachKeyed walks.
func keyedObjects(in *translator.Inputs) []keyed {
	all := make([]keyed, 0, count(in))
	eachKeyed(in, func(k keyed) { all = append(all, k) })
	return all
}
