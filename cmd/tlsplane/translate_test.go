package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// The CLI prints exactly the golden document (same renderer, clock fixed by
// SOURCE_DATE_EPOCH = the golden test's now).
func TestTranslatePrintsTheGoldenDocument(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767225600")
	for _, c := range []struct {
		name string
		args []string

		refused bool // printed, then refused: exit 3
	}{
		{"ca-several-refs-one-invalid", nil, true},
		{"options-valid", []string{"--allow-insecure-skip-verify"}, false},
		{"service-without-policy", nil, false},
	} {
		var stdout, stderr bytes.Buffer
		args := append(c.args, "../../testdata/translator/"+c.name+".in.yaml")
		err := runTranslate(args, &stdout, &stderr)
		var refused *refusedError
		if c.refused && !errors.As(err, &refused) || !c.refused && err != nil {
			t.Fatalf("%s: %v, want refused=%v", c.name, err, c.refused)
		}
		want, err := os.ReadFile("../../testdata/translator/" + c.name + ".out.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(stdout.Bytes(), want) {
			t.Errorf("%s: output differs from the golden file", c.name)
		}
		if c.name == "service-without-policy" && !strings.Contains(stderr.String(), "warning: ") {
			t.Errorf("%s: no warning for the skipped Deployment; stderr: %s", c.name, stderr.String())
		}
	}
}

func TestTranslateErrors(t *testing.T) {
	dir := t.TempDir()
	bad := dir + "/bad.yaml"
	if err := os.WriteFile(bad, []byte("hello: world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{bad}, "bad.yaml: document 1: not a Kubernetes object"},
		{[]string{dir + "/absent.yaml"}, "absent.yaml"},
		{[]string{"-o", "xml", bad}, `-o "xml"`},
		{nil, "no PATH given"},
	} {
		var stdout, stderr bytes.Buffer
		err := runTranslate(c.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error = %v, want it to contain %q", c.args, err, c.want)
		}
		if stdout.Len() != 0 {
			t.Errorf("%v: printed a document on error", c.args)
		}
	}
}

// examples/gateway translates without a warning; its listeners bind
// --listener-address, 0.0.0.0 by default, and private keys are not printed.
func TestTranslateGatewayExample(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767225600")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "address: 0.0.0.0"},
		{[]string{"--listener-address", "10.1.2.3"}, "address: 10.1.2.3"},
	} {
		var stdout, stderr bytes.Buffer
		if err := runTranslate(append(c.args, "../../examples/gateway"), &stdout, &stderr); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		out := stdout.String()
		if stderr.Len() != 0 {
			t.Errorf("%v: warnings: %s", c.args, stderr.String())
		}
		for _, want := range []string{c.want, "name: shop/edge/10080", "name: shop/edge/10443/https", "name: Certificate/shop/edge-certificate", "kind: HTTPRoute"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q", c.args, want)
			}
		}
		if strings.Contains(out, "BEGIN PRIVATE KEY") || strings.Contains(out, "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS") {
			t.Errorf("%v: output prints the listener certificate's private key", c.args)
		}
	}
	var stdout, stderr bytes.Buffer
	err := runTranslate([]string{"--listener-address", "edge.shop.example", "../../examples/gateway"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `"edge.shop.example" is not an IP address`) {
		t.Errorf("a host name as --listener-address: %v, want an error naming it", err)
	}
}

// In a directory, a document that is not a Kubernetes object is skipped
// with a warning naming it (examples/ holds Envoy bootstraps); named
// explicitly, it is an error. Flags may follow the paths.
func TestTranslateDirectorySkipsForeignDocuments(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := runTranslate([]string{"../../examples/", "-o", "json", "--xbackend-hostnames", "localhost"}, &stdout, &stderr); err != nil {
		t.Fatalf("translate examples/ -o json: %v", err)
	}
	if !strings.HasPrefix(stdout.String(), "{") || !strings.Contains(stdout.String(), `"shop/payments/8443"`) {
		t.Errorf("translate examples/ -o json: not the JSON document:\n%.300s", stdout.String())
	}
	if want := "examples/envoy.yaml: document 1: skipped: not a Kubernetes object (no apiVersion)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("no warning %q; stderr:\n%s", want, stderr.String())
	}

	dir := t.TempDir()
	mixed := "admin: {}\n---\n" + `apiVersion: v1
kind: Service
metadata: {name: a, namespace: ns}
spec: {ports: [{name: http, port: 80}]}
---
- a list
---
apiVersion: v1
kind: Service
metadata: {name: b, namespace: ns}
spec: {ports: [{name: http, port: "eighty"}]}
`
	if err := os.WriteFile(dir+"/mixed.yaml", []byte(mixed), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	err := runTranslate([]string{dir}, &stdout, &stderr)
	// Documents keep their numbers: the broken Service is document 4.
	if err == nil || !strings.Contains(err.Error(), "mixed.yaml: document 4") {
		t.Errorf("a broken Service after skipped documents: %v, want an error naming document 4", err)
	}
	for _, want := range []string{"document 1: skipped: not a Kubernetes object (no apiVersion)", "document 3: skipped: not a Kubernetes object (not a YAML mapping)"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("no warning %q; stderr:\n%s", want, stderr.String())
		}
	}
	if err := runTranslate([]string{"../../examples/envoy.yaml"}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "not a Kubernetes object") {
		t.Errorf("translate examples/envoy.yaml: %v, want an error", err)
	}
}
