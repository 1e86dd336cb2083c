package manifests

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tlsplane/tlsplane/crds"
)

// gatewayAPIGroups are the API groups whose objects are admitted against
// the Gateway API CRDs before they are read.
var gatewayAPIGroups = []string{"gateway.networking.k8s.io/", experimentalOnlyGroup}

// experimentalOnlyGroup is the group of the X kinds (XBackend, XMesh, ...).
const experimentalOnlyGroup = "gateway.networking.x-k8s.io/"

// isGatewayAPI says whether apiVersion is of a Gateway API group.
func isGatewayAPI(apiVersion string) bool {
	for _, g := range gatewayAPIGroups {
		if strings.HasPrefix(apiVersion, g) {
			return true
		}
	}
	return false
}

// maxRequestBodyBytes is the API server's bound on a request's body
// (--max-request-bytes' default, 3 MiB): a larger object is refused
// before it is decoded.
const maxRequestBodyBytes = 3 << 20

// admitted is a Gateway API object as the API server would store it on a
// create: pruned and defaulted, as the generic tree admission worked on.
type admitted struct {
	obj      map[string]any
	warnings []string
}

// decode sets typed, a pointer to the object's Go type, from the admitted
// tree: what the API server's JSON would decode to, without writing the
// JSON and reading it back (TestAdmittedDecodeIsJSONDecode). Admission
// has pruned every field the schema does not know and warned of it, and
// every field the schemas know is one of the Go types'
// (TestSchemasHaveGoFields), so no key is left for a strict decode to
// find: keeping track of matched keys was a tenth of a read's
// allocations.
func (a admitted) decode(typed any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(a.obj, typed)
}

// admit does to a Gateway API object what the API server does on a
// create (crds.Validator.Admit): namespace is the request's, as kubectl
// sends it. The object is doc, or obj when not nil: doc decoded, by a
// caller that knows doc is within the API server's bound. An object the
// API server would refuse, including one of a kind or version the
// channel's CRDs do not serve, is a *RefusedError.
func admit(v *crds.Validator, id objectID, prefix []pathStep, doc []byte, obj map[string]any) (admitted, error) {
	if obj == nil {
		// The schema leaves some strings unbounded (a header modifier's
		// remove[], label selectors); the API server bounds them by its
		// request body.
		if len(doc) > maxRequestBodyBytes {
			return admitted{}, &RefusedError{Refusals: []Refusal{id.refusal("", fmt.Sprintf("Request entity too large: limit is %d", maxRequestBodyBytes), prefix)}}
		}
		var err error
		if obj, err = crds.Decode(doc); err != nil {
			return admitted{}, fmt.Errorf("not a Kubernetes object: %s", excerptError(err))
		}
	}
	switch namespaced, served := v.Namespaced(id.apiVersion, id.kind); {
	case namespaced:
		if meta, ok := obj["metadata"].(map[string]any); ok {
			if ns, _ := meta["namespace"].(string); ns == "" {
				meta["namespace"] = id.namespace
			}
		}
	case served:
		id.namespace = "" // the API server drops a cluster-scoped object's
	}
	var generation any
	if meta, ok := obj["metadata"].(map[string]any); ok {
		generation = meta["generation"]
	}
	errs, warnings, err := v.Admit(obj)
	// A create starts at generation 1; a file has no history, and the
	// generation it gives stands for the object's (statuses'
	// observedGeneration report it).
	if meta, ok := obj["metadata"].(map[string]any); ok && generation != nil && err == nil {
		meta["generation"] = generation
	}
	var notServed *crds.NotServedError
	switch {
	case errors.As(err, &notServed):
		r := refusals(id, nil, nil)
		r.Refusals = append(r.Refusals, id.refusal("apiVersion", notServed.Error(), append(append([]pathStep(nil), prefix...), pathStep{key: "apiVersion", index: -1})))
		return admitted{}, r
	case err != nil:
		// Malformed metadata: the API server's 400, before validation.
		return admitted{}, fmt.Errorf("%s", excerptError(err))
	case len(errs) > 0:
		return admitted{}, refusals(id, prefix, errs)
	}
	return admitted{obj: obj, warnings: warnings}, nil
}
