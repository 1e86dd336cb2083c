package manifests

import (
	"encoding/json"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

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
		path := field.NewPath("spec", "ports").Index(i)
		for _, msg := range validation.IsValidPortNum(int(min(max(p.Port, -1), 1<<17))) {
			errs = append(errs, field.Invalid(path.Child("port"), p.Port, msg))
		}
		if p.Name != "" {
			for _, msg := range validation.IsDNS1123Label(p.Name) {
				errs = append(errs, field.Invalid(path.Child("name"), Excerpt(p.Name), msg))
			}
		}
	}
	return errs
}

// joined is a field.ErrorList as one line.
func joined(errs field.ErrorList) string {
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}
