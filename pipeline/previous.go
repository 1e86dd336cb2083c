package pipeline

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
)

// previousStatus is what each input policy carried before this
// translation: its own .status when it has entries (the API server's truth,
// which other controllers write too), else what this process computed last
// time (the directory source's manifests rarely carry a status), so
// lastTransitionTime only moves when a condition does.
func previousStatus(in translator.Inputs, computed translator.PreviousStatus) translator.PreviousStatus {
	prev := make(translator.PreviousStatus, len(in.Policies))
	for _, pol := range in.Policies {
		key := types.NamespacedName{Namespace: pol.Namespace, Name: pol.Name}
		if len(pol.Status.Ancestors) > 0 {
			prev[key] = pol.Status
		} else if st, ok := computed[key]; ok {
			prev[key] = st
		}
	}
	return prev
}
