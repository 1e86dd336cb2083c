package crds

import (
	"context"
	"errors"
	"fmt"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apimetavalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// ErrNotServed is wrapped by Admit's error for an object whose apiVersion
// and kind no CRD of the channel serves.
var ErrNotServed = errors.New("no CRD serves it")

// NotServedError says no CRD of the channel serves an object's apiVersion
// and kind, as kubectl reports it ("no matches for kind"), and which
// versions of that kind are served, if any.
type NotServedError struct {
	Channel, APIVersion, Kind string
	Served                    []string
}

func (e *NotServedError) Error() string {
	msg := fmt.Sprintf("no matches for kind %q in version %q (Gateway API %s channel)", e.Kind, e.APIVersion, e.Channel)
	if len(e.Served) > 0 {
		msg += fmt.Sprintf("; it serves %s at %s", e.Kind, strings.Join(e.Served, ", "))
	}
	return msg
}

func (e *NotServedError) Unwrap() error { return ErrNotServed }

// Admit does to obj, one object decoded as Decode decodes it, what the API server
// does to the body of a create of a custom resource with
// fieldValidation=Warn, in its order: it drops unknown fields (warning
// `unknown field "spec.x"` for each), applies the schema's defaults,
// drops status and sets generation 1, then validates ObjectMeta, the
// OpenAPI schema, list-type sets and maps, and the CEL rules within the
// API server's cost budgets. obj is changed in place; its namespace, for a
// namespaced kind, must be set as the request's would be (a cluster-scoped
// kind's is dropped). errs are the API server's field errors; warnings
// include a deprecated version's. err is a *NotServedError when no CRD of
// the channel serves obj's apiVersion and kind, or says why obj could not
// be decoded (malformed metadata, as the API server's 400).
func (v *Validator) Admit(obj map[string]any) (errs field.ErrorList, warnings []string, err error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, perr := schema.ParseGroupVersion(apiVersion)
	ver, ok := v.versions[gv.WithKind(kind)]
	if perr != nil || !ok {
		return nil, nil, &NotServedError{Channel: v.channel, APIVersion: apiVersion, Kind: kind, Served: v.served[schema.GroupKind{Group: gv.Group, Kind: kind}]}
	}
	if err := ver.compiled(); err != nil {
		return nil, nil, err
	}
	v.admitted.Add(1)
	unknown, err := ver.coerce(obj)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range unknown {
		warnings = append(warnings, fmt.Sprintf("unknown field %q", p))
	}
	// The codec defaults after decoding (unstructuredDefaulter).
	ver.applyDefaults(obj)
	u := &unstructured.Unstructured{Object: obj}
	ver.prepareForCreate(u)
	errs = ver.validate(u)
	// What the API server answers, and every read after, is decoded from
	// storage, which defaults again: a status the create dropped comes
	// back as its schema's default (a Gateway's "Waiting for controller").
	ver.applyDefaults(obj)
	warnings = append(warnings, finalizerWarnings(u.GetFinalizers())...)
	warnings = append(warnings, ver.warnings...)
	return errs, warnings, nil
}

// coerce is the request decoder's schema coercion
// (unstructuredSchemaCoercer.apply): ObjectMeta read and written back
// clean, unknown fields pruned, nulls the schema does not allow dropped,
// embedded resources' ObjectMeta coerced.
func (ver *version) coerce(obj map[string]any) (unknown []string, err error) {
	kind, foundKind := obj["kind"].(string)
	apiVersion, foundAPIVersion := obj["apiVersion"].(string)
	meta, foundMeta, metaUnknown, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return nil, err
	}
	unknown = append(unknown, metaUnknown...)
	// Without a field to drop, pruning changes and names nothing.
	if ver.memo == nil || ver.pruning.wouldPrune(obj, true) {
		unknown = append(unknown, structuralpruning.PruneWithOptions(obj, ver.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	}
	// Without a null in an object's field it would remove nothing.
	if ver.memo == nil || holdsNullField(obj) {
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, ver.structural)
	}
	// Without an embedded resource below the root it does nothing.
	if ver.memo == nil || ver.embedded {
		ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, obj, ver.structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
		if ferr != nil {
			return nil, ferr
		}
		unknown = append(unknown, paths...)
	}
	if foundKind {
		obj["kind"] = kind
	}
	if foundAPIVersion {
		obj["apiVersion"] = apiVersion
	}
	if foundMeta {
		if err := schemaobjectmeta.SetObjectMeta(obj, meta); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}

// applyDefaults is structuraldefaulting.Default(obj, ver.structural), by
// the defaulter built once; without a memo (a test's baseline), the
// library's.
func (ver *version) applyDefaults(obj map[string]any) {
	if ver.memo == nil {
		structuraldefaulting.Default(obj, ver.structural)
		return
	}
	ver.defaulter.apply(obj)
}

// prepareForCreate is rest.BeforeCreate's part that changes the object: a
// cluster-scoped object has no namespace, a create cannot set status, and
// generation starts at 1.
func (ver *version) prepareForCreate(u *unstructured.Unstructured) {
	if !ver.namespaced {
		u.SetNamespace("")
	}
	if ver.hasStatus {
		delete(u.Object, "status")
	}
	u.SetGeneration(1)
}

// validate is customResourceStrategy.Validate.
func (ver *version) validate(u *unstructured.Unstructured) field.ErrorList {
	if errs := ver.validateTypeMeta(u); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	errs = append(errs, apimetavalidation.ValidateObjectMetaAccessor(u, ver.namespaced, apimetavalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	// The library's schema errors; an object valid in parts has none.
	// Without a memo (a test's baseline), the library alone.
	if ver.memo == nil || !ver.schemaTree.valid(ver.memo, u.Object) {
		errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u.Object, ver.schema)...)
	}
	if ver.memo == nil || ver.embedded {
		errs = append(errs, schemaobjectmeta.Validate(nil, u.Object, ver.structural, false)...)
	}
	// Without a set or map list of two items, the library finds nothing.
	if ver.memo == nil || ver.listSets.mayRefuse(u.Object) {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, ver.structural, u.Object)...)
	}
	if blocked, err := blockingError(errs); blocked {
		return append(errs, err)
	}
	// ver.cel.Validate's answer, with repeated subtrees from the memo.
	if ver.memo == nil {
		celErrs, _ := ver.cel.Validate(context.Background(), nil, ver.structural, u.Object, nil, celconfig.RuntimeCELCostBudget)
		return append(errs, celErrs...)
	}
	celErrs, _ := ver.celTree.validate(context.Background(), ver.memo, nil, u.Object, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// validateTypeMeta is customResourceValidator.ValidateTypeMeta; Admit
// found the version by these fields, so it only fails on a bug.
func (ver *version) validateTypeMeta(u *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if u.GetKind() != ver.gvk.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), u.GetKind(), "must be "+ver.gvk.Kind))
	}
	if want := ver.gvk.GroupVersion().String(); u.GetAPIVersion() != want {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), "must be "+want))
	}
	return errs
}

// blockingError is the API server's rule (hasBlockingErr): after a type,
// required, enum, length or count error, the CEL rules are not run, and
// one error says so.
func blockingError(errs field.ErrorList) (bool, *field.Error) {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
		}
	}
	return false, nil
}

// Decode reads one JSON object as the API server's unstructured decoder
// does, integers as int64 (CEL and the schema tell int from float), so
// that Admit sees what the API server sees.
func Decode(data []byte) (map[string]any, error) {
	var obj map[string]any
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	return obj, nil
}
