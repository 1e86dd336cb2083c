package provisioner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// The bootstraps Build writes, plaintext and with the xDS client Secret
// (its files put where the Secret would be mounted), pass Envoy 1.40's
// --mode validate as the Deployment runs it.
func TestBootstrapEnvoyValidates(t *testing.T) {
	envoy := translatortest.EnvoyBinary(t)
	dir := t.TempDir()
	translatortest.XDSClientFiles(t, dir, "shop", "edge-xds-client", "spiffe.example")
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
			translatortest.ValidateBootstrap(t, envoy, path, "--service-node", "shop/tlsplane-edge-0")
		})
	}
}
