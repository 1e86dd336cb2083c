package manifests

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateCore checks what tlsplane relies on of a core kind's object
// decoded into obj, as the API server validates it after decoding: a
// Service's ports, a ConfigMap's or Secret's keys. Its name and
// namespace are validateMeta's.
func validateCore(obj any) field.ErrorList {
	switch o := obj.(type) {
	case *corev1.Service:
		return validateService(o)
	case *corev1.ConfigMap:
		data := slices.Sorted(maps.Keys(o.Data))
		return append(validateKeys("data", data, nil), validateKeys("binaryData", slices.Sorted(maps.Keys(o.BinaryData)), data)...)
	case *corev1.Secret:
		// stringData is merged into data before the API server validates.
		return append(validateKeys("data", slices.Sorted(maps.Keys(o.Data)), nil), validateKeys("data", slices.Sorted(maps.Keys(o.StringData)), nil)...)
	}
	return nil
}

// validateKeys checks the sorted keys of a ConfigMap's or Secret's field f
// as the API server does (ValidateConfigMap, ValidateSecret): each a
// valid key, and none of taken (a ConfigMap's binaryData key may not be a
// data key). A key names a file in a CA bundle reference.
func validateKeys(f string, keys, taken []string) field.ErrorList {
	var errs field.ErrorList
	for _, key := range keys {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(field.NewPath(f).Key(Excerpt(key)), Excerpt(key), msg))
		}
		if _, dup := slices.BinarySearch(taken, key); dup {
			errs = append(errs, field.Invalid(field.NewPath(f).Key(Excerpt(key)), Excerpt(key), "duplicate of key present in data"))
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
func validateService(svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	for i, p := range svc.Spec.Ports {
		path := func() *field.Path { return field.NewPath("spec", "ports").Index(i) }
		for _, msg := range validation.IsValidPortNum(int(p.Port)) {
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
