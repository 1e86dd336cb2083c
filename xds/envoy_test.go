package xds

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// TestRealEnvoy proves against Envoy 1.40 that clusters leave warming (CDS,
// EDS and SDS all served over one ADS stream), that a rejected version is
// neither re-sent nor reported twice, and that the next change lands.
func TestRealEnvoy(t *testing.T) {
	bin := translatortest.EnvoyBinary(t)
	for _, apiType := range []string{"GRPC", "DELTA_GRPC"} {
		t.Run(apiType, func(t *testing.T) {
			h := start(t, snapshots.Options{})
			good := payments
			good.CA = selfSignedCA(t)
			h.publish(t, st.Output(good), true)
			admin := runEnvoy(t, bin, apiType, h.addr)

			waitFor(t, admin, "/config_dump?resource=dynamic_active_clusters", `"shop/payments/8443"`)
			waitFor(t, admin, "/config_dump?resource=dynamic_active_secrets", `"shop/payments/8443/ca"`)

			bad := good
			bad.SNI = strings.Repeat("x", 300) // over Envoy's 255-byte limit
			h.publish(t, st.Output(bad), true)
			nack := h.expectNACK(t)
			t.Logf("Envoy NACK: %+v", nack)
			if nack.TypeURL != resource.ClusterType || nack.Fleet != "edge" || len(nack.Policies) != 1 || nack.Policies[0] != payments.Policy() {
				t.Errorf("NACK = %+v", nack)
			}
			sent := counterValue(t, h.metrics.responses.WithLabelValues(resource.ClusterType))
			time.Sleep(1500 * time.Millisecond)
			if now := counterValue(t, h.metrics.responses.WithLabelValues(resource.ClusterType)); now != sent {
				t.Errorf("CDS responses went from %v to %v after the NACK: a resend loop", sent, now)
			}
			if n := counterValue(t, h.metrics.nacks.WithLabelValues(resource.ClusterType)); n != 1 {
				t.Errorf("NACKs = %v, want 1", n)
			}

			fixed := good
			fixed.SNI = "fixed.shop"
			h.publish(t, st.Output(fixed), true)
			waitFor(t, admin, "/config_dump?resource=dynamic_active_clusters", `"fixed.shop"`)
		})
	}
}

// runEnvoy starts Envoy of fleet edge with ADS at xdsAddr and returns its
// admin URL.
func runEnvoy(t *testing.T, bin, apiType, xdsAddr string) string {
	t.Helper()
	admin, _ := runEnvoyOf(t, bin, apiType, xdsAddr, "edge")
	return admin
}

// runEnvoyOf starts Envoy of fleet with ADS at xdsAddr, reached through
// its cluster "xds"; it returns its admin URL and process.
func runEnvoyOf(t *testing.T, bin, apiType, xdsAddr, fleet string) (string, *exec.Cmd) {
	t.Helper()
	dir := t.TempDir()
	host, port, _ := strings.Cut(xdsAddr, ":")
	bootstrap := fmt.Sprintf(`node: {id: envoy-test, cluster: %q}
admin: {address: {socket_address: {address: 127.0.0.1, port_value: 0}}}
dynamic_resources:
  ads_config:
    api_type: %s
    transport_api_version: V3
    grpc_services: [{envoy_grpc: {cluster_name: xds}}]
  cds_config: {ads: {}, resource_api_version: V3}
  lds_config: {ads: {}, resource_api_version: V3}
static_resources:
  clusters:
  - name: xds
    type: STATIC
    connect_timeout: 1s
    typed_extension_protocol_options:
      envoy.extensions.upstreams.http.v3.HttpProtocolOptions:
        "@type": type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions
        explicit_http_config: {http2_protocol_options: {}}
    load_assignment:
      cluster_name: xds
      endpoints: [{lb_endpoints: [{endpoint: {address: {socket_address: {address: %s, port_value: %s}}}}]}]
`, fleet, apiType, host, port)
	cfg := filepath.Join(dir, "envoy.yaml")
	if err := os.WriteFile(cfg, []byte(bootstrap), 0o600); err != nil {
		t.Fatal(err)
	}
	addrFile := filepath.Join(dir, "admin")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-c", cfg, "--admin-address-path", addrFile,
		"--disable-hot-restart", "--concurrency", "1", "-l", "warning")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			return "http://" + strings.TrimSpace(string(b)), cmd
		}
		if time.Now().After(deadline) {
			t.Fatal("Envoy did not write its admin address")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitFor polls an Envoy admin path until its body contains want.
func waitFor(t *testing.T, admin, path, want string) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(15 * time.Second)
	var body []byte
	for time.Now().Before(deadline) {
		if resp, err := client.Get(admin + path); err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), want) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("Envoy %s never showed %s; last body:\n%s", path, want, body)
}

// selfSignedCA is a real CA certificate: Envoy rejects a bogus PEM.
func selfSignedCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tlsplane test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
