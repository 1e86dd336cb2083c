package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// issueCollision is the issue's case: in namespace client, the listener
// certificate Secret client and a policy's tlsplane.io/clientCertificateRef
// certificate map to one SDS name (client/client/certificate); and a
// second tenant, shop, that is fine.
func issueCollision(t *testing.T) string {
	secret := func(ns, name string) string {
		s := translatortest.TLSSecret(t, ns, name, name+".example")
		return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: %s}\ntype: kubernetes.io/tls\ndata: {tls.crt: %s, tls.key: %s}\n---\n",
			name, ns, base64.StdEncoding.EncodeToString(s.Data["tls.crt"]), base64.StdEncoding.EncodeToString(s.Data["tls.key"]))
	}
	gateway := func(ns, cert string) string {
		return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: %[1]s, generation: 1}
spec:
  gatewayClassName: tlsplane
  addresses: [{value: 192.0.2.40}]
  listeners:
  - {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: %[2]s}]}}
---
`, ns, cert)
	}
	ca := "    " + strings.ReplaceAll(strings.TrimSpace(translatortest.CA), "\n", "\n    ")
	return `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane, generation: 1}
spec: {controllerName: tlsplane.io/controller}
---
` + gateway("client", "client") + secret("client", "client") + secret("client", "certificate") +
		gateway("shop", "edge-cert") + secret("shop", "edge-cert") + `apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: pay, namespace: client, generation: 1, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Service, name: pay}]
  validation:
    hostname: pay.example
    caCertificateRefs: [{group: "", kind: ConfigMap, name: pay-ca}]
  options:
    tlsplane.io/clientCertificateRef: certificate
---
apiVersion: v1
kind: Service
metadata: {name: pay, namespace: client}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: pay-ca, namespace: client}
data:
  ca.crt: |
` + ca + "\n"
}

// TestTranslateRefusesTheIssueCollision: translate prints the document,
// with the Gateway of namespace client Programmed=False naming the secret
// and the policy, and returns a refusal (exit 3) naming them too; the
// other Gateway is Programmed.
func TestTranslateRefusesTheIssueCollision(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "world.yaml"), issueCollision(t))
	var stdout, stderr bytes.Buffer
	err := runTranslate([]string{dir}, &stdout, &stderr)
	var refused *refusedError
	if !errors.As(err, &refused) {
		t.Fatalf("translate: %v, want a refusal (exit %d)", err, exitRefused)
	}
	for _, want := range []string{"Gateway client/edge: Programmed=False (SecretNameConflict)", `"client/client/certificate"`, "BackendTLSPolicy client/pay"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "Gateway shop/edge") {
		t.Errorf("refusal names the other tenant's Gateway:\n%v", err)
	}
	for _, want := range []string{"reason: SecretNameConflict", "type: tlsplane.io/Conflicted"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the printed document lacks %q (the Gateway's refusal, the policy's conflict):\n%s", want, stdout.String())
		}
	}
}

// TestTranslateExitsZeroOnlyWhenNothingIsRefused: the examples translate
// with nothing refused; a policy with an invalid option is a refusal.
func TestTranslateExitsZeroOnlyWhenNothingIsRefused(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := runTranslate([]string{"../../examples/"}, &stdout, &stderr); err != nil {
		t.Fatalf("examples: %v", err)
	}
	in, err := os.ReadFile("../../testdata/translator/options-invalid.in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "p.yaml"), string(in))
	err = runTranslate([]string{dir}, &stdout, &stderr)
	var refused *refusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "BackendTLSPolicy ") || !strings.Contains(err.Error(), "Accepted=False") {
		t.Fatalf("options-invalid: %v, want the policies refused", err)
	}
}
