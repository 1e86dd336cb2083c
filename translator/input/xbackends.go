package input

import (
	"k8s.io/apimachinery/pkg/types"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
)

// XBackend is what a route's backendRef reads of an XBackend: the object,
// and the engine's verdict on it (package xbackend judges; the engine
// records the outcome here, after emission, before routes are judged).
type XBackend struct {
	Object *gwxv1a1.XBackend
	// Refused is the reason it is not Accepted ("" when it is), Why its
	// message.
	Refused, Why string
}

// XBackends are the XBackends by namespace/name.
type XBackends map[types.NamespacedName]XBackend

// indexXBackends keys in's XBackends, unjudged (the last of a key wins).
func indexXBackends(in Inputs) XBackends {
	out := make(XBackends, len(in.XBackends))
	for _, x := range in.XBackends {
		out[NameOf(x.Namespace, x.Name)] = XBackend{Object: x, Refused: "Unjudged", Why: "not judged yet"}
	}
	return out
}
