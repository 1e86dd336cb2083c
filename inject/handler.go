package inject

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/translator/mesh"
)

// MaxReview bounds an AdmissionReview's body: the API server refuses
// requests above 3 MiB, and a review carries the object once on CREATE.
const MaxReview = 4 << 20

// Path is where the webhook is served (the MutatingWebhookConfiguration's
// service path and url).
const Path = "/inject"

// NamespaceGetter returns a namespace with its labels, from a cache when
// it can; NotFound is an error like any other.
type NamespaceGetter func(ctx context.Context, name string) (*corev1.Namespace, error)

// Handler serves the webhook. The API server already skipped namespaces
// the webhook configuration's namespaceSelector does not match; the
// handler checks the namespace's labels again, so a configuration with a
// wider selector (or none) still injects only the mesh.
type Handler struct {
	Config     Config
	Selector   *mesh.Selector
	Namespaces NamespaceGetter
	Logger     *slog.Logger
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST an AdmissionReview", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxReview))
	if err != nil {
		http.Error(w, fmt.Sprintf("AdmissionReview body: %v (at most %d bytes)", err, MaxReview), http.StatusRequestEntityTooLarge)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not an AdmissionReview with a request: %v", err), http.StatusBadRequest)
		return
	}
	resp, err := h.review(r.Context(), review.Request)
	if err != nil {
		// Our own failure, not the Pod's: the API server's failurePolicy
		// decides (Ignore: created without the mesh; Fail: refused).
		h.Logger.Error("mesh injection failed", "namespace", review.Request.Namespace, "pod", podName(review.Request), "error", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	resp.UID = review.Request.UID
	out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
	if out.APIVersion == "" {
		out.APIVersion, out.Kind = "admission.k8s.io/v1", "AdmissionReview"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// review is the answer to one request; an error is ours, not the Pod's.
func (h *Handler) review(ctx context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	allow := &admissionv1.AdmissionResponse{Allowed: true}
	if req.Kind.Group != "" || req.Kind.Kind != "Pod" || req.Operation != admissionv1.Create || req.SubResource != "" {
		return allow, nil
	}
	var pod corev1.Pod
	if err := json.Unmarshal(req.Object.Raw, &pod); err != nil {
		return nil, fmt.Errorf("Pod %s/%s: %w", req.Namespace, podName(req), err)
	}
	ns, err := h.Namespaces(ctx, req.Namespace)
	if err != nil {
		return nil, fmt.Errorf("namespace %s of Pod %s: %w", req.Namespace, podName(req), err)
	}
	d, err := Decide(h.Config, h.Selector, ns, &pod)
	if err != nil {
		h.Logger.Info("mesh injection refused a Pod", "namespace", req.Namespace, "pod", podName(req), "reason", err)
		return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
			Message: fmt.Sprintf("tlsplane mesh injection: Pod %s/%s: %v", req.Namespace, podName(req), err)}}, nil
	}
	if d.Patch == nil {
		h.Logger.Debug("mesh injection skipped a Pod", "namespace", req.Namespace, "pod", podName(req), "reason", d.Skipped)
		return allow, nil
	}
	patch, err := json.Marshal(d.Patch)
	if err != nil {
		return nil, err
	}
	h.Logger.Info("mesh injection", "namespace", req.Namespace, "pod", podName(req))
	jsonPatch := admissionv1.PatchTypeJSONPatch
	return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &jsonPatch, Patch: patch}, nil
}

// podName is the Pod's name, or its generateName prefix: a ReplicaSet's
// Pods are often named only after admission.
func podName(req *admissionv1.AdmissionRequest) string {
	if req.Name != "" {
		return req.Name
	}
	var meta struct {
		Metadata struct {
			Name         string `json:"name"`
			GenerateName string `json:"generateName"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(req.Object.Raw, &meta)
	if meta.Metadata.Name != "" {
		return meta.Metadata.Name
	}
	return meta.Metadata.GenerateName + "*"
}
