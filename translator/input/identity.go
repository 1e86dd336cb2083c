package input

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// SameObject reports that two inputs are the same object in the same
// state: the same pointer (inputs are immutable), or the same UID at the
// same resourceVersion (the API server's promise that nothing changed).
// Objects without both, as the directory source makes, are the same only
// by pointer; the source keeps the pointers of unchanged files.
func SameObject(a, b metav1.Object) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a == b {
		return true
	}
	uid, rv := a.GetUID(), a.GetResourceVersion()
	return uid != "" && rv != "" && uid == b.GetUID() && rv == b.GetResourceVersion()
}
