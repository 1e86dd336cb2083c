package manifests

import (
	"encoding/json"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxGatewayAPIString is the longest string any spec field of the Gateway
// API CRDs allows (v1.6: header and option values; names are 253, paths
// 1024). The API server refuses longer ones by the CRDs' maxLength; a file
// gets the same answer, so no message ever quotes more than this of a spec.
const maxGatewayAPIString = 4096

// maxStringErrors bounds the errors reported for one object.
const maxStringErrors = 5

// gatewayAPIGroup is the API group whose objects carry the CRDs' bounds.
const gatewayAPIGroup = "gateway.networking.k8s.io/"

// validateGatewayAPIStrings refuses spec strings longer than any Gateway
// API field allows, naming the field.
func validateGatewayAPIStrings(apiVersion string, doc []byte) field.ErrorList {
	// A JSON string is never shorter than its value: most objects need no
	// second decode.
	if !strings.HasPrefix(apiVersion, gatewayAPIGroup) || len(doc) <= maxGatewayAPIString {
		return nil
	}
	var obj struct {
		Spec any `json:"spec"`
	}
	if err := json.Unmarshal(doc, &obj); err != nil {
		return nil // the typed decode reports it
	}
	var errs field.ErrorList
	walkStrings(field.NewPath("spec"), obj.Spec, func(p *field.Path, s string) bool {
		if len(s) > maxGatewayAPIString {
			errs = append(errs, field.TooLong(p, Excerpt(s), maxGatewayAPIString))
		}
		return len(errs) < maxStringErrors
	})
	return errs
}

// walkStrings calls visit on every string under v, in a stable order,
// until visit returns false.
func walkStrings(p *field.Path, v any, visit func(*field.Path, string) bool) bool {
	switch v := v.(type) {
	case string:
		return visit(p, v)
	case []any:
		for i, e := range v {
			if !walkStrings(p.Index(i), e, visit) {
				return false
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if len(k) > maxGatewayAPIString && !visit(p.Key(Excerpt(k)), k) {
				return false
			}
			if !walkStrings(p.Child(Excerpt(k)), v[k], visit) {
				return false
			}
		}
	}
	return true
}
