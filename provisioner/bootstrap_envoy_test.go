package provisioner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// The bootstraps Build writes, plaintext and with the xDS client Secret
// (its files put where the Secret would be mounted), pass Envoy 1.40's
// --mode validate as the Deployment runs it.
func TestBootstrapEnvoyValidates(t *testing.T) {
	envoy := translatortest.EnvoyBinary(t)
	dir := t.TempDir()
	secret := translatortest.TLSSecret(t, "shop", "edge-xds-client", "spiffe.example")
	for name, data := range map[string][]byte{"tls.crt": secret.Data["tls.crt"], "tls.key": secret.Data["tls.key"], "ca.crt": secret.Data["tls.crt"]} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	withTLS := testConfig
	withTLS.XDSClientSecret = "edge-xds-client"
	for name, cfg := range map[string]Config{"plaintext": testConfig, "mutual-tls": withTLS} {
		t.Run(name, func(t *testing.T) {
			objs, err := Build(infraGateway(), nil, controller, cfg)
			if err != nil {
				t.Fatal(err)
			}
			boot := strings.ReplaceAll(objs.ConfigMap.Data[bootstrapKey], xdsTLSDir, dir)
			path := filepath.Join(dir, name+".json")
			if err := os.WriteFile(path, []byte(boot), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, envoy, "--mode", "validate", "-c", path,
				"--service-node", "shop/tlsplane-edge-0", "--disable-hot-restart", "--log-level", "error").CombinedOutput()
			if err != nil {
				t.Fatalf("envoy --mode validate: %v\n%s\n%s", err, out, boot)
			}
		})
	}
}
