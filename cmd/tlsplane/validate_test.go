package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkDir is a directory of manifests for validate: one file that is fine,
// one whose YAML does not parse, and one whose HTTPRoute's backend does
// not exist (refused by status, second document of its file).
func checkDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"good.yaml": `apiVersion: v1
kind: Service
metadata: {name: pay, namespace: shop}
spec: {ports: [{port: 443}]}
`,
		"broken.yaml": "apiVersion: v1\nkind: Service\nmetadata: [unclosed\n",
		"route.yaml": `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane}
spec: {controllerName: tlsplane.io/controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: shop}
spec:
  gatewayClassName: tlsplane
  addresses: [{value: 192.0.2.40}]
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
# the route's backend is absent
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: web
  namespace: shop
spec:
  parentRefs: [{name: edge}]
  rules: [{backendRefs: [{name: absent, port: 80}]}]
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Every refusal is printed, one FILE:LINE: KIND NS/NAME: FIELD: MESSAGE
// line each, past the first refused file; the exit is 3.
func TestValidatePrintsEveryRefusal(t *testing.T) {
	dir := checkDir(t)
	var stdout, stderr bytes.Buffer
	err := runValidate([]string{dir}, &stdout, &stderr)
	var failed *checkFailed
	if !errors.As(err, &failed) || failed.exitCode() != exitRefused {
		t.Fatalf("validate: %v, want a refusal (exit %d)", err, exitRefused)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	want := []string{
		filepath.Join(dir, "broken.yaml") + ": document 1: ",
		filepath.Join(dir, "route.yaml") + ":15: HTTPRoute shop/web: status.parents[Gateway edge].conditions[ResolvedRefs]: ResolvedRefs=False (BackendNotFound): ",
	}
	if len(lines) != len(want) || failed.refused != len(want) {
		t.Fatalf("validate printed %d lines (refused %d), want %d:\n%s", len(lines), failed.refused, len(want), stdout.String())
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d = %q\nwant prefix   %q", i+1, lines[i], want[i])
		}
	}
}

// -o json carries the same findings, each field apart; translate --check
// is validate.
func TestValidateJSONAndTranslateCheck(t *testing.T) {
	dir := checkDir(t)
	var text, stderr bytes.Buffer
	_ = runValidate([]string{dir}, &text, &stderr)
	for _, args := range [][]string{{"validate", "-o", "json", dir}, {"translate", "--check", "-o", "json", dir}} {
		var stdout bytes.Buffer
		run := runValidate
		if args[0] == "translate" {
			run = runTranslate
		}
		if err := run(args[1:], &stdout, &stderr); err == nil {
			t.Fatalf("%v: no refusal", args)
		}
		var report checkReport
		if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
			t.Fatalf("%v: not JSON: %v\n%s", args, err, stdout.String())
		}
		if report.Files != 3 || report.Objects != 4 || len(report.Findings) != 2 {
			t.Fatalf("%v: %d files, %d objects, %d findings; want 3, 4, 2", args, report.Files, report.Objects, len(report.Findings))
		}
		route := report.Findings[1]
		if route.Kind != "HTTPRoute" || route.Namespace != "shop" || route.Name != "web" || route.Line != 15 || route.Reason != "BackendNotFound" {
			t.Errorf("%v: route finding %+v", args, route)
		}
		var lines []string
		for _, f := range report.Findings {
			lines = append(lines, f.String())
		}
		if got := strings.Join(lines, "\n") + "\n"; got != text.String() {
			t.Errorf("%v: JSON findings as lines\n%s\ndiffer from validate's text\n%s", args, got, text.String())
		}
	}
}

// Nothing refused: no output, exit 0; examples/gateway is such a directory.
func TestValidateAcceptsTheGatewayExample(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := runValidate([]string{"../../examples/gateway"}, &stdout, &stderr); err != nil {
		t.Fatalf("validate examples/gateway: %v\n%s", err, stdout.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("validate examples/gateway printed:\n%s", stdout.String())
	}
	stdout.Reset()
	if err := runValidate([]string{"-o", "json", "../../examples/gateway"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), `"findings": []`) {
		t.Errorf("-o json without findings: %s", stdout.String())
	}
}

func TestValidateUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no PATH given"},
		{[]string{"-o", "yaml", "x"}, `-o "yaml": want text, json or github`},
		{[]string{"/nonexistent/manifests"}, "/nonexistent/manifests"},
	} {
		var stdout, stderr bytes.Buffer
		err := runValidate(c.args, &stdout, &stderr)
		var failed *checkFailed
		if err == nil || errors.As(err, &failed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("validate %v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}

// -o github: one error annotation per finding, on its file and line, with
// the workflow command's escapes.
func TestValidateGitHubAnnotations(t *testing.T) {
	dir := checkDir(t)
	var stdout, stderr bytes.Buffer
	if err := runValidate([]string{"-o", "github", dir}, &stdout, &stderr); err == nil {
		t.Fatal("no refusal")
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	want := "::error file=" + escapeProperty(filepath.Join(dir, "route.yaml")) + ",line=15,title=HTTPRoute shop/web::status.parents[Gateway edge].conditions[ResolvedRefs]: ResolvedRefs=False (BackendNotFound): "
	if len(lines) != 2 || !strings.HasPrefix(lines[1], want) {
		t.Fatalf("annotations:\n%s\nwant the second to start %q", stdout.String(), want)
	}
	if got := (finding{File: "a,b:c.yaml", Message: "50% of\nit"}).githubCommand(); got != "::error file=a%2Cb%3Ac.yaml::50%25 of%0Ait" {
		t.Errorf("escaped: %s", got)
	}
}

// An object the API server would refuse is a finding at its field's line,
// (the deepest the file has: listeners[0] for its missing protocol), with
// the API server's message; every refused object of a file is one, and
// the file's other objects are translated, as a cluster would hold them.
func TestValidateReportsAdmissionRefusals(t *testing.T) {
	dir := t.TempDir()
	var rules strings.Builder
	for range 17 {
		rules.WriteString("  - backendRefs: [{name: pay, port: 443}]\n")
	}
	body := `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: many, namespace: shop}
spec:
  parentRefs: [{name: edge}]
  rules:
` + rules.String() + `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: shop}
spec:
  gatewayClassName: tlsplane
  listeners:
  - name: http
    port: 80
---
apiVersion: v1
kind: Service
metadata: {name: pay, namespace: shop}
spec: {ports: [{name: https, port: 443}]}
`
	if err := os.WriteFile(filepath.Join(dir, "routes.yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := runValidate([]string{"-o", "json", dir}, &stdout, &stderr); err == nil {
		t.Fatal("no refusal")
	}
	var report checkReport
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatal(err)
	}
	byField := map[string]finding{}
	for _, f := range report.Findings {
		byField[f.Kind+" "+f.Field] = f
	}
	rulesFinding, protocol := byField["HTTPRoute spec.rules"], byField["Gateway spec.listeners[0].protocol"]
	if rulesFinding.Line != 6 || !strings.Contains(rulesFinding.Message, "must have at most 16 items") || rulesFinding.Name != "many" {
		t.Errorf("17 rules: %+v; all: %+v", rulesFinding, report.Findings)
	}
	if protocol.Line != 31 || !strings.Contains(protocol.Message, "Required value") {
		t.Errorf("a listener without protocol: %+v; all: %+v", protocol, report.Findings)
	}
	if report.Objects != 1 {
		t.Errorf("%d objects of the file translated, want its Service alone", report.Objects)
	}
}
