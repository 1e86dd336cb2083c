package dirsource

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// keepRefused is admitted, the file's objects the API server would
// admit, with the version st holds of each object refused: an update the
// API server refuses leaves the object as it was, and an object refused
// on its first read is not served. A refused object that the file also
// defines admitted (a duplicate) is served as admitted.
func keepRefused(st *fileState, admitted translator.Inputs, refused *manifests.RefusedError) translator.Inputs {
	if len(st.objects) == 0 {
		return admitted
	}
	defined := map[objectKey]bool{}
	for _, k := range keyedObjects(&admitted) {
		defined[k.key] = true
	}
	for _, r := range refused.Refusals {
		_, kind, namespace, name := r.Object()
		k := objectKey{translator.Kind(kind), types.NamespacedName{Namespace: namespace, Name: name}}
		if old, ok := st.objects[k]; ok && !defined[k] {
			admitted.Add(old)
			defined[k] = true // a refusal a field: one object has several
		}
	}
	return admitted
}
