package monitoring

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// quickstartWithCRL copies the quickstart's manifests to a directory and
// adds a Service shop/ledger whose BackendTLSPolicy trusts a CA naming a
// distribution point on 127.0.0.1, with tlsplane.io/crlDistributionPoints:
// the fetch counter exists only once tlsplane fetched a list, and only
// with --crl-fetch-allow (returned with the directory).
func quickstartWithCRL(t *testing.T) (dir string, args []string) {
	t.Helper()
	var ca *harness.Authority
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-pem-file")
		_, _ = w.Write(ca.CRL(t, time.Now().Add(24*time.Hour)))
	}))
	t.Cleanup(srv.Close)
	ca = harness.NewAuthorityWithCRL(t, "tlsplane monitoring CRL CA", srv.URL+"/ca.crl")

	dir = t.TempDir()
	quickstart := filepath.Join(harness.RepoRoot(), "examples", "quickstart")
	files, err := filepath.Glob(filepath.Join(quickstart, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type object = map[string]any
	meta := func(name string) object { return object{"namespace": "shop", "name": name} }
	objs := []object{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("ledger-ca"), "data": object{"ca.crt": string(ca.PEM)}},
		{"apiVersion": "v1", "kind": "Service", "metadata": meta("ledger"),
			"spec": object{"ports": []object{{"name": "https", "port": 8443, "protocol": "TCP"}}}},
		{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
			"metadata":  object{"namespace": "shop", "name": "ledger-local", "labels": object{"kubernetes.io/service-name": "ledger"}},
			"endpoints": []object{{"addresses": []string{"127.0.0.1"}, "conditions": object{"ready": true}}},
			"ports":     []object{{"name": "https", "port": 8444, "protocol": "TCP"}}},
		{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy", "metadata": meta("ledger"),
			"spec": object{
				"targetRefs": []object{{"group": "", "kind": "Service", "name": "ledger"}},
				"validation": object{"hostname": "ledger.shop.example",
					"caCertificateRefs": []object{{"group": "", "kind": "ConfigMap", "name": "ledger-ca"}}},
				"options": object{"tlsplane.io/crlDistributionPoints": "KeepLastGood"},
			}},
	}
	var docs []string
	for _, o := range objs {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	if err := os.WriteFile(filepath.Join(dir, "ledger-crl.yaml"), []byte(strings.Join(docs, "\n---\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, []string{"--crl-fetch-allow", srv.URL}
}
