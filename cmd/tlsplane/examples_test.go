package main

import (
	"bytes"
	"strings"
	"testing"
)

// Each example translates cleanly on its own; examples/ as one directory
// gives exactly the warnings README's Two commands section shows: the two
// Envoy bootstraps skipped, and the six objects examples/gateway repeats
// from examples/quickstart (each example is a whole --dir of its own)
// ignored. An example that gains a warning, or a change to what README
// promises, fails here.
func TestTranslateExamples(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767225600")
	for _, dir := range []string{"quickstart", "gateway", "external"} {
		var stdout, stderr bytes.Buffer
		args := []string{"../../examples/" + dir}
		if dir == "external" {
			// Its XBackends name the example backends on localhost, which
			// only an operator's allow-list admits (README says so).
			args = append([]string{"--xbackend-hostnames", "localhost"}, args...)
		}
		if err := runTranslate(args, &stdout, &stderr); err != nil {
			t.Fatalf("examples/%s: %v", dir, err)
		}
		if stderr.Len() != 0 {
			t.Errorf("examples/%s: warnings:\n%s", dir, stderr.String())
		}
	}

	var stdout, stderr bytes.Buffer
	if err := runTranslate([]string{"../../examples/", "--xbackend-hostnames", "localhost"}, &stdout, &stderr); err != nil {
		t.Fatalf("examples/: %v", err)
	}
	want := []string{
		"examples/envoy-gateway.yaml: document 1: skipped: not a Kubernetes object (no apiVersion)",
		"examples/envoy.yaml: document 1: skipped: not a Kubernetes object (no apiVersion)",
		"examples/quickstart/ca-configmap.yaml: ConfigMap shop/payments-ca ignored: already defined in examples/gateway/ca-configmap.yaml",
		"examples/quickstart/catalog.yaml: Service shop/catalog ignored: already defined in examples/gateway/catalog.yaml",
		"examples/quickstart/catalog.yaml: EndpointSlice shop/catalog-local ignored: already defined in examples/gateway/catalog.yaml",
		"examples/quickstart/payments-tls.yaml: BackendTLSPolicy shop/payments ignored: already defined in examples/gateway/payments-tls.yaml",
		"examples/quickstart/payments.yaml: Service shop/payments ignored: already defined in examples/gateway/payments.yaml",
		"examples/quickstart/payments.yaml: EndpointSlice shop/payments-local ignored: already defined in examples/gateway/payments.yaml",
	}
	got := strings.Split(strings.TrimSpace(strings.ReplaceAll(stderr.String(), "../../", "")), "\n")
	if strings.Join(got, "\n") != "warning: "+strings.Join(want, "\nwarning: ") {
		t.Errorf("tlsplane translate examples/ warned:\n%s\nwant (as README says):\nwarning: %s", stderr.String(), strings.Join(want, "\nwarning: "))
	}
	if !strings.Contains(stdout.String(), "name: shop/edge/10443/https") || !strings.Contains(stdout.String(), "name: CA/shop/configmap/payments-ca") {
		t.Errorf("examples/ as one directory lacks the gateway's listener or the quickstart's CA:\n%.2000s", stdout.String())
	}
}
