package manifests

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateCore checks what tlsplane relies on of a core kind's object, as
// the API server validates it: its name and namespace, a Service's ports,
// a ConfigMap's or Secret's keys.
func validateCore(kind, name, namespace string, clusterScoped bool, doc []byte) field.ErrorList {
	errs := validateMeta(kind, name, namespace, clusterScoped)
	switch kind {
	case "Service":
		errs = append(errs, validateService(doc)...)
	case "ConfigMap":
		errs = append(errs, validateKeys(doc, "data", "binaryData")...)
	case "Secret":
		errs = append(errs, validateKeys(doc, "data", "stringData")...)
	}
	return errs
}

// validateKeys checks a ConfigMap's or Secret's keys as the API server
// does (ValidateConfigMap, ValidateSecret): each a valid key, and a
// ConfigMap's binaryData key not also a data key. A key names a file in a
// CA bundle reference.
func validateKeys(doc []byte, fields ...string) field.ErrorList {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(doc, &obj); err != nil {
		return nil // the typed decode reports it
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	for _, f := range fields {
		var m map[string]unread
		if err := json.Unmarshal(obj[f], &m); err != nil {
			continue // the typed decode reports it
		}
		for _, key := range slices.Sorted(maps.Keys(m)) {
			// stringData is merged into data before the API server validates.
			path := func() *field.Path {
				return field.NewPath(strings.Replace(f, "stringData", "data", 1)).Key(Excerpt(key))
			}
			for _, msg := range validation.IsConfigMapKey(key) {
				errs = append(errs, field.Invalid(path(), Excerpt(key), msg))
			}
			if f == "binaryData" && seen[key] {
				errs = append(errs, field.Invalid(path(), Excerpt(key), "duplicate of key present in data"))
			}
			seen[key] = true
		}
	}
	return errs
}

// validateMeta checks an object's name and namespace as the API server
// would: a file can say `namespace: "shop/sneaky"`, and names end up
// inside Envoy resource names (`<namespace>/<service>/<port>`), where a
// '/' would pass for another namespace's.
func validateMeta(kind, name, namespace string, clusterScoped bool) field.ErrorList {
	var errs field.ErrorList
	nameRule := apivalidation.NameIsDNSSubdomain
	switch kind {
	case "Service":
		nameRule = apivalidation.NameIsDNS1035Label
	case "Namespace":
		nameRule = apivalidation.NameIsDNSLabel
	}
	if name == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "name is required"))
	}
	for _, msg := range nameRule(name, false) {
		if name != "" {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), Excerpt(name), msg))
		}
	}
	if !clusterScoped {
		for _, msg := range apivalidation.ValidateNamespaceName(namespace, false) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), Excerpt(namespace), msg))
		}
	}
	return errs
}

// validateService checks what the translator reads of a Service's ports:
// the number, which names the cluster, and the name, which a policy's
// sectionName matches.
func validateService(doc []byte) field.ErrorList {
	var svc struct {
		Spec struct {
			Ports []struct {
				Name string `json:"name"`
				Port int64  `json:"port"`
			} `json:"ports"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(doc, &svc); err != nil {
		return nil // the typed decode reports it
	}
	var errs field.ErrorList
	for i, p := range svc.Spec.Ports {
		path := func() *field.Path { return field.NewPath("spec", "ports").Index(i) }
		for _, msg := range validation.IsValidPortNum(int(min(max(p.Port, -1), 1<<17))) {
			errs = append(errs, field.Invalid(path().Child("port"), p.Port, msg))
		}
		if p.Name != "" {
			for _, msg := range validation.IsDNS1123Label(p.Name) {
				errs = append(errs, field.Invalid(path().Child("name"), Excerpt(p.Name), msg))
			}
		}
	}
	return errs
}

// unread is a JSON value only checked, not kept: a ConfigMap's data is
// read by the typed decode.
type unread struct{}

func (*unread) UnmarshalJSON([]byte) error { return nil }
