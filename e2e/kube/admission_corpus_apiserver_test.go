package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// corpusNamespace holds the corpus's namespaced objects that name none.
const corpusNamespace = "admission-corpus"

// verdict is one side's decision on one object.
type verdict struct {
	accepted bool
	// defaulted is the object as admitted (accepted only).
	defaulted map[string]any
	// message is the refusal as the side words it (refused only).
	message string
	// fields are the field paths the refusal names (tlsplane only).
	fields []string
	// warnings are what the side warned of (unknown fields dropped, a
	// deprecated version).
	warnings []string
}

// apiServerJudge submits objects to a real kube-apiserver as server-side
// dry-run creates: the answer is the admitted, defaulted object or the
// refusal, and nothing is stored.
type apiServerJudge struct {
	kube   kubernetes.Interface
	dyn    dynamic.Interface
	mapper meta.RESTMapper
	// namespaces already known to exist.
	namespaces map[string]bool
	// warned collects the warnings of the request in flight; requests are
	// sequential.
	warned *warningRecorder
}

// warningRecorder keeps the API server's warnings instead of logging them.
type warningRecorder struct{ warnings []string }

func (w *warningRecorder) HandleWarningHeader(code int, agent, text string) {
	if code == 299 && text != "" {
		w.warnings = append(w.warnings, text)
	}
}

func newAPIServerJudge(cfg *rest.Config) (*apiServerJudge, error) {
	warned := &warningRecorder{}
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = warned
	k, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	return &apiServerJudge{kube: k, dyn: dyn, mapper: mapper, namespaces: map[string]bool{}, warned: warned}, nil
}

// namespaced reports whether the API server serves obj's kind at its
// version in a namespace; an error means it does not serve it at all.
func (j *apiServerJudge) namespaced(obj *unstructured.Unstructured) (bool, error) {
	gvk := obj.GroupVersionKind()
	m, err := j.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return false, err
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// judge dry-run creates obj (its namespace created for real if missing).
// A kind or version the channel does not serve is a refusal: the API
// server would answer the create with 404.
func (j *apiServerJudge) judge(ctx context.Context, obj *unstructured.Unstructured) (verdict, error) {
	gvk := obj.GroupVersionKind()
	m, err := j.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return verdict{message: fmt.Sprintf("the API server does not serve %s: %v", gvk, err)}, nil
	}
	if err != nil {
		return verdict{}, err
	}
	var ri dynamic.ResourceInterface = j.dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if err := j.ensureNamespace(ctx, obj.GetNamespace()); err != nil {
			return verdict{}, err
		}
		ri = j.dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
	}
	j.warned.warnings = nil
	out, err := ri.Create(ctx, obj.DeepCopy(), metav1.CreateOptions{
		DryRun:       []string{metav1.DryRunAll},
		FieldManager: "admission-corpus",
		// The API's default, which crds.Admit models: an unknown field is
		// dropped with a warning (kubectl apply asks for Strict instead).
		FieldValidation: metav1.FieldValidationWarn,
	})
	warnings := j.warned.warnings
	var status apierrors.APIStatus
	switch {
	case err == nil:
		return verdict{accepted: true, defaulted: out.Object, warnings: warnings}, nil
	case errors.As(err, &status) && refusal(status.Status()):
		return verdict{message: err.Error(), warnings: warnings}, nil
	default:
		return verdict{}, fmt.Errorf("dry-run create %s %s/%s: %w", gvk.Kind, obj.GetNamespace(), obj.GetName(), err)
	}
}

// refusal tells an admission decision (the object is wrong) from a failure
// of the test's own machinery (a timeout, a missing namespace).
func refusal(s metav1.Status) bool {
	switch s.Reason {
	case metav1.StatusReasonInvalid, metav1.StatusReasonBadRequest, metav1.StatusReasonForbidden:
		// Forbidden: a ValidatingAdmissionPolicy of the CRD bundle.
		return true
	}
	return false
}

func (j *apiServerJudge) ensureNamespace(ctx context.Context, name string) error {
	if j.namespaces[name] {
		return nil
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tlsplane.io/e2e": "admission-corpus"}}}
	_, err := j.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	j.namespaces[name] = true
	return nil
}

// mentions is how many of fields the API server's message names.
func mentions(message string, fields []string) int {
	n := 0
	for _, f := range fields {
		if strings.Contains(message, f) {
			n++
		}
	}
	return n
}
