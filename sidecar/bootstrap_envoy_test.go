package sidecar

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// TestBootstrapEnvoyValidates: Envoy 1.40 accepts the bootstrap as the
// sidecar runs it, plaintext to an IP and with mutual TLS to a name.
func TestBootstrapEnvoyValidates(t *testing.T) {
	envoy := translatortest.EnvoyBinary(t)
	dir := t.TempDir()
	translatortest.XDSClientFiles(t, dir, "shop", "echo", "tlsplane.tlsplane-system.svc")
	mtls := shopEcho
	mtls.XDSAddress, mtls.APIType = "tlsplane.tlsplane-system.svc:18000", "GRPC"
	mtls.XDSTLS = &XDSTLS{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"), CAFile: filepath.Join(dir, "ca.crt")}
	for name, o := range map[string]Options{"plaintext": shopEcho, "mutual-tls": mtls} {
		t.Run(name, func(t *testing.T) {
			boot, err := YAML(o)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name+".yaml")
			if err := os.WriteFile(path, boot, 0o644); err != nil {
				t.Fatal(err)
			}
			translatortest.ValidateBootstrap(t, envoy, path)
		})
	}
}
