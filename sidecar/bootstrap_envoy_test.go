package sidecar

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// TestBootstrapEnvoyValidates: Envoy 1.40 accepts the bootstrap as the
// sidecar runs it, plaintext to an IP and with mutual TLS to a name.
func TestBootstrapEnvoyValidates(t *testing.T) {
	envoy := translatortest.EnvoyBinary(t)
	dir := t.TempDir()
	secret := translatortest.TLSSecret(t, "shop", "echo", "tlsplane.tlsplane-system.svc")
	for name, data := range map[string][]byte{"tls.crt": secret.Data["tls.crt"], "tls.key": secret.Data["tls.key"], "ca.crt": secret.Data["tls.crt"]} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
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
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, envoy, "--mode", "validate", "-c", path, "--disable-hot-restart", "--log-level", "error").CombinedOutput()
			if err != nil {
				t.Fatalf("envoy --mode validate: %v\n%s\n%s", err, out, boot)
			}
		})
	}
}
