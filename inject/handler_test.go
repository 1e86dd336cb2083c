package inject

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func review(kind string, op admissionv1.Operation, ns string, object []byte) []byte {
	r := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "uid-1", Kind: metav1.GroupVersionKind{Version: "v1", Kind: kind},
			Operation: op, Namespace: ns, Object: runtime.RawExtension{Raw: object}},
	}
	b, _ := json.Marshal(r)
	return b
}

// TestHandler posts AdmissionReviews to the handler on a loopback server.
func TestHandler(t *testing.T) {
	namespaces := map[string]*corev1.Namespace{"shop": inMesh, "ops": outside}
	h := &Handler{Config: testConfig, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Namespaces: func(_ context.Context, name string) (*corev1.Namespace, error) {
			if ns, ok := namespaces[name]; ok {
				return ns, nil
			}
			return nil, errors.New("namespaces \"" + name + "\" not found")
		}}
	srv := httptest.NewServer(h)
	defer srv.Close()

	pod := podJSON(nil)
	for _, tc := range []struct {
		name    string
		body    []byte
		status  int
		allowed bool
		patched bool
		message string
	}{
		{"a Pod in the mesh", review("Pod", admissionv1.Create, "shop", pod), 200, true, true, ""},
		{"a Pod outside", review("Pod", admissionv1.Create, "ops", pod), 200, true, false, ""},
		{"an update", review("Pod", admissionv1.Update, "shop", pod), 200, true, false, ""},
		{"not a Pod", review("ConfigMap", admissionv1.Create, "shop", []byte(`{}`)), 200, true, false, ""},
		{"refused by its annotation", review("Pod", admissionv1.Create, "shop", podJSON(map[string]string{AnnotationMesh: "off"})), 200, false, false,
			`tlsplane mesh injection: Pod shop/web: annotation tlsplane.io/mesh: "off"`},
		{"an unknown namespace is our failure", review("Pod", admissionv1.Create, "gone", pod), 500, false, false, `namespace gone of Pod web: namespaces "gone" not found`},
		{"not a review", []byte(`{"kind":"Pod"}`), 400, false, false, "not an AdmissionReview"},
		{"too large", bytes.Repeat([]byte(" "), MaxReview+1), 413, false, false, "at most 4194304 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(srv.URL+Path, "application/json", bytes.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status != 200 {
				if !strings.Contains(string(body), tc.message) {
					t.Fatalf("body %q, want %q", body, tc.message)
				}
				return
			}
			var out admissionv1.AdmissionReview
			if err := json.Unmarshal(body, &out); err != nil || out.Response == nil {
				t.Fatalf("%v: %s", err, body)
			}
			r := out.Response
			if r.UID != "uid-1" || r.Allowed != tc.allowed || (len(r.Patch) > 0) != tc.patched || out.Kind != "AdmissionReview" {
				t.Fatalf("response %+v, want uid-1, allowed %v, patched %v", r, tc.allowed, tc.patched)
			}
			if tc.patched && (r.PatchType == nil || *r.PatchType != admissionv1.PatchTypeJSONPatch) {
				t.Fatalf("patch type %v, want JSONPatch", r.PatchType)
			}
			if tc.message != "" && (r.Result == nil || !strings.Contains(r.Result.Message, tc.message)) {
				t.Fatalf("result %+v, want message %q", r.Result, tc.message)
			}
		})
	}
}
