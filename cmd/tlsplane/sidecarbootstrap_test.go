package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsplane/tlsplane/sidecar"
)

// The command prints sidecar.YAML of its flags, identity from the
// downward API's variables when the flags are not given, and refuses
// what sidecar refuses.
func TestSidecarBootstrapCommand(t *testing.T) {
	want, err := sidecar.YAML(sidecar.Options{Namespace: "shop", Pod: "echo-1", ServiceAccount: "echo", XDSAddress: "10.0.0.5:18000", APIType: "GRPC"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runSidecarBootstrap([]string{"--namespace", "shop", "--pod", "echo-1", "--service-account", "echo", "--xds-address", "10.0.0.5:18000", "--xds-api-type", "GRPC"}, &out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("printed:\n%s\nwant:\n%s", out.Bytes(), want)
	}

	t.Setenv("POD_NAMESPACE", "shop")
	t.Setenv("POD_NAME", "echo-1")
	t.Setenv("POD_SERVICE_ACCOUNT", "echo")
	file := filepath.Join(t.TempDir(), "bootstrap.yaml")
	if err := runSidecarBootstrap([]string{"--xds-address", "10.0.0.5:18000", "--xds-api-type", "GRPC", "-o", file}, &out); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(file); err != nil || !bytes.Equal(got, want) {
		t.Errorf("-o %s: %v\n%s\nwant:\n%s", file, err, got, want)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--xds-address", "tlsplane"}, "xDS address \"tlsplane\""},
		{[]string{"--xds-address", "10.0.0.5:18000", "--xds-tls-cert", "c"}, "needs a certificate, its key"},
		{[]string{"--xds-address", "10.0.0.5:18000", "extra"}, "unexpected arguments"},
	} {
		if err := runSidecarBootstrap(tc.args, &out); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

func TestSidecarAndCaptureHelpGroupsComplete(t *testing.T) {
	_, fs := newSidecarBootstrapFlags()
	if err := helpGroupsComplete(fs, sidecarBootstrapFlagGroups); err != nil {
		t.Errorf("sidecar-bootstrap: %v", err)
	}
	_, fs = newCaptureFlags()
	if err := helpGroupsComplete(fs, captureFlagGroups); err != nil {
		t.Errorf("capture: %v", err)
	}
}
