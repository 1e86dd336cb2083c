package crds

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// Validator admits objects against the CRDs of one channel. It is safe
// for concurrent use, as the API server shares one per CRD version.
type Validator struct {
	channel string
	// versions is every served version of every CRD of the channel.
	versions map[schema.GroupVersionKind]*version
	// served lists each group and kind's served versions, for messages.
	served map[schema.GroupKind][]string
	// admitted counts Admit's calls that found a served version, so that
	// a test can tell what a change re-admitted.
	admitted atomic.Uint64
}

// version is what the API server builds to serve one version of a CRD
// (customresource_handler.go getOrCreateServingInfo): its structural
// schema with defaults pruned, its OpenAPI validator, its compiled CEL
// rules.
//
// What Serves and Namespaced read is known when the channel loads; the
// rest is compiled when the version first admits an object (compiled):
// most directories use a few of the channel's kinds, and compiling every
// version's CEL rules was most of the time a small `tlsplane validate`
// took.
type version struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	// hasStatus: a create drops status when the status subresource is on.
	hasStatus bool
	// warnings are sent with every object of a deprecated version.
	warnings []string

	compile    sync.Once
	compileErr error
	// source is the CRD and version compile builds from, dropped after.
	source     *apiextensionsv1.CustomResourceDefinition
	sourceName string

	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
	// celTree walks cel's rules with the channel's memo (celwalk.go).
	celTree *celNode
	// schemaTree is schema's OpenAPI schema split for the same memo
	// (schemawalk.go).
	schemaTree *schemaNode
	memo       *valueMemo
	// defaulter applies structural's defaults (defaulting.go).
	defaulter *defaulter
	// listSets finds the lists of type set or map (listsets.go).
	listSets *listSetNode
	// embedded: a node below the root is an embedded resource, whose
	// ObjectMeta is coerced and validated (embedded.go).
	embedded bool
	// pruning says whether pruning would drop a field (pruning.go).
	pruning *pruneNode
}

// loaded caches one Validator per channel: compiling the CEL rules of
// every CRD is the cost, and it is paid once per process.
var loaded sync.Map // channel -> func() (*Validator, error)

// Load is the Validator of channel (Standard or Experimental), built on
// first use and shared after.
func Load(channel string) (*Validator, error) {
	// Load first: every file parse (and X kind) asks, and LoadOrStore
	// would make a closure each time.
	once, ok := loaded.Load(channel)
	if !ok {
		once, _ = loaded.LoadOrStore(channel, sync.OnceValues(func() (*Validator, error) { return build(channel) }))
	}
	return once.(func() (*Validator, error))()
}

// crdScheme defaults a CRD as the API server does when it is created.
var crdScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

func build(channel string) (*Validator, error) {
	named, err := channelFiles(channel)
	if err != nil {
		return nil, err
	}
	v := &Validator{channel: channel, versions: map[schema.GroupVersionKind]*version{}, served: map[schema.GroupKind][]string{}}
	// One memo a channel: keys name their node, so versions share it and
	// its bound.
	memo := newMemo()
	for name, data := range named {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("CRD %s/%s: %w", channel, name, err)
		}
		crdScheme.Default(crd)
		for _, ver := range crd.Spec.Versions {
			if !ver.Served {
				continue // the API server has no such kind
			}
			declared, err := declareVersion(crd, ver)
			if err != nil {
				return nil, fmt.Errorf("CRD %s/%s version %s: %w", channel, name, ver.Name, err)
			}
			declared.memo = memo
			v.versions[declared.gvk] = declared
			gk := declared.gvk.GroupKind()
			v.served[gk] = append(v.served[gk], ver.Name)
		}
	}
	for _, vs := range v.served {
		sort.Strings(vs)
	}
	return v, nil
}

// declareVersion is what the channel's load knows of one served version
// of crd: its kind, scope, status subresource and deprecation.
func declareVersion(crd *apiextensionsv1.CustomResourceDefinition, ver apiextensionsv1.CustomResourceDefinitionVersion) (*version, error) {
	subresources, err := apihelpers.GetSubresourcesForVersion(crd, ver.Name)
	if err != nil {
		return nil, err
	}
	out := &version{
		gvk:        schema.GroupVersionKind{Group: crd.Spec.Group, Version: ver.Name, Kind: crd.Spec.Names.Kind},
		namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		hasStatus:  subresources != nil && subresources.Status != nil,
		source:     crd,
		sourceName: ver.Name,
	}
	if ver.Deprecated {
		if ver.DeprecationWarning != nil {
			out.warnings = append(out.warnings, *ver.DeprecationWarning)
		} else {
			out.warnings = append(out.warnings, defaultDeprecationWarning(ver.Name, crd.Spec))
		}
	}
	return out, nil
}

// compiled builds, once, what the API server builds to serve the version
// (getOrCreateServingInfo, NewStrategy): its structural schema, OpenAPI
// validator and CEL rules, and this package's trees over them.
func (out *version) compiled() error {
	out.compile.Do(func() {
		out.compileErr = out.build()
		if out.compileErr != nil {
			out.compileErr = fmt.Errorf("CRD %s version %s: %w", out.source.Name, out.sourceName, out.compileErr)
		}
		out.source = nil
	})
	return out.compileErr
}

func (out *version) build() error {
	val, err := apihelpers.GetSchemaForVersion(out.source, out.sourceName)
	if err != nil {
		return err
	}
	if val == nil || val.OpenAPIV3Schema == nil {
		return fmt.Errorf("no schema")
	}
	internal := &apiextensionsinternal.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, internal, nil); err != nil {
		return fmt.Errorf("converting its schema: %w", err)
	}
	s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return fmt.Errorf("its schema is not structural: %w", err)
	}
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return fmt.Errorf("pruning its defaults: %w", err)
	}
	schemaValidator, openapiSchema, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		return fmt.Errorf("its OpenAPI validator: %w", err)
	}
	out.structural = s
	out.schema = schemaValidator
	out.cel = cel.NewValidator(s, true, celconfig.PerCallLimit)
	out.celTree = newCELNode(out.cel, false, false)
	out.defaulter = newDefaulter(s)
	out.listSets = newListSetNode(s)
	out.embedded = holdsEmbeddedResource(s)
	out.pruning = newPruneNode(s)
	out.schemaTree = newSchemaNode(openapiSchema)
	out.schemaTree.root = true
	return nil
}

// Channel is the channel v admits against.
func (v *Validator) Channel() string { return v.channel }

// Serves says whether a CRD of v's channel serves apiVersion and kind.
func (v *Validator) Serves(apiVersion, kind string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return false
	}
	_, ok := v.versions[gv.WithKind(kind)]
	return ok
}

// Namespaced says whether the CRD serving apiVersion and kind is
// namespaced; served is false when none serves them.
func (v *Validator) Namespaced(apiVersion, kind string) (namespaced, served bool) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return false, false
	}
	ver, ok := v.versions[gv.WithKind(kind)]
	return ok && ver.namespaced, ok
}

// Admitted is how many objects of a served kind v has admitted (or
// refused) since the process started.
func (v *Validator) Admitted() uint64 { return v.admitted.Load() }

// Schema is the structural schema (defaults pruned) of the CRD version
// serving apiVersion and kind, for tests that hold it to a Go type.
func (v *Validator) Schema(apiVersion, kind string) (*structuralschema.Structural, bool) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, false
	}
	ver, ok := v.versions[gv.WithKind(kind)]
	if !ok || ver.compiled() != nil {
		return nil, false
	}
	return ver.structural, true
}

// compiledVersions compiles every version of v, for the tests that walk
// them all.
func (v *Validator) compiledVersions() (map[schema.GroupVersionKind]*version, error) {
	for _, ver := range v.versions {
		if err := ver.compiled(); err != nil {
			return nil, err
		}
	}
	return v.versions, nil
}
