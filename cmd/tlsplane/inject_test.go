package main

import (
	"io"
	"strings"
	"testing"
)

func TestInjectHelpGroupsComplete(t *testing.T) {
	_, fs := newInjectFlags()
	if err := helpGroupsComplete(fs, injectFlagGroups); err != nil {
		t.Fatal(err)
	}
}

// TestInjectFlags: what the flags refuse before anything is bound or read.
func TestInjectFlags(t *testing.T) {
	valid := []string{"--sidecar-image", "envoy:1", "--tlsplane-image", "tlsplane:1", "--sidecar-xds-address", "tlsplane-xds:18000",
		"--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem", "--kubeconfig", "/nonexistent/kubeconfig"}
	for _, tc := range []struct {
		name string
		args []string
		err  string
	}{
		{"no images", []string{"--sidecar-xds-address", "x:1"}, "sidecar image: empty (the Envoy image of the sidecar); tlsplane image: empty"},
		{"root sidecar", append(valid, "--sidecar-uid", "0"), "sidecar UID 0"},
		{"bad selector", append(valid, "--mesh-namespaces", ""), "selects every namespace"},
		{"positional", append(valid, "extra"), `unexpected arguments ["extra"]`},
		// Valid flags get as far as the kubeconfig.
		{"valid", valid, `--kubeconfig "/nonexistent/kubeconfig"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := runInject(tc.args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one with %q", err, tc.err)
			}
		})
	}
}
