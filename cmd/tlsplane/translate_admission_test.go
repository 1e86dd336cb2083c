package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An object the API server would refuse is left out of the translation,
// whose other objects, of its file too, are translated; the refusal is
// one of translate's refused lines (exit 3), at its field's line.
func TestTranslateLeavesOutARefusedObject(t *testing.T) {
	dir := t.TempDir()
	body := `apiVersion: v1
kind: Service
metadata: {name: pay, namespace: shop}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: pay-ca, namespace: shop}
data: {ca.crt: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: pay-bad, namespace: shop}
spec:
  targetRefs: [{group: "", kind: Service, name: pay}]
  validation:
    hostname: pay.shop.svc
    wellKnownCACertificates: System
    caCertificateRefs: [{group: "", kind: ConfigMap, name: pay-ca}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: pay-good, namespace: shop}
spec:
  targetRefs: [{group: "", kind: Service, name: pay}]
  validation:
    hostname: pay.shop.svc
    caCertificateRefs: [{group: "", kind: ConfigMap, name: pay-ca}]
`
	path := filepath.Join(dir, "pay.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := runTranslate([]string{path}, &stdout, &stderr)
	var refused *refusedError
	if !errors.As(err, &refused) {
		t.Fatalf("translate: %v, want a refusal (exit 3)", err)
	}
	want := path + ":16: BackendTLSPolicy shop/pay-bad: spec.validation: Invalid value: must not contain both CACertificateRefs and WellKnownCACertificates"
	if len(refused.lines) == 0 || !strings.HasPrefix(refused.lines[0], want) {
		t.Errorf("refused lines %q, want the first to start %q", refused.lines, want)
	}
	out := stdout.String()
	if !strings.Contains(out, "name: pay-good") {
		t.Errorf("the file's admitted BackendTLSPolicy is not in the translation:\n%s", out)
	}
	if strings.Contains(out, "pay-bad") {
		t.Errorf("the refused BackendTLSPolicy is in the translation:\n%s", out)
	}
}
