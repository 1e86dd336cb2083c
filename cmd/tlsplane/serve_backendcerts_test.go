package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/backendcerts"
	"github.com/tlsplane/tlsplane/pipeline"
	"github.com/tlsplane/tlsplane/xds"
)

// The inventory serve hands the pipeline sets XBackends' condition too,
// and reads the translation's clusters for the preferred version.
var (
	_ pipeline.XBackendConditions = (*backendcerts.Inventory)(nil)
	_ pipeline.ClusterConditions  = (*backendcerts.Inventory)(nil)
)

// backendLeaf is a backend certificate for payments.shop.example with
// serial and notAfter.
func backendLeaf(t *testing.T, serial int64, notAfter time.Time) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "payments.shop.example"},
		DNSNames: []string{"payments.shop.example"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

// TestServeReportsBackendCertificatesOnThePolicy feeds sightings through
// the xDS server's OnCertificateSighting, as the access log service calls
// it, into a serve with a real pipeline translating the quickstart, and
// reads the condition, the inventory and the metric back from the admin
// server; the policy's maximumVersion, read from the translated cluster,
// decides which version is below the preferred one.
func TestServeReportsBackendCertificatesOnThePolicy(t *testing.T) {
	dir := copyQuickstart(t)
	var mu sync.Mutex
	var sightings func(xds.CertificateSighting)
	p := startServeWith(t, dir, func(cfg *serveConfig) {
		cfg.seeXDSOptions = func(o xds.Options) { mu.Lock(); defer mu.Unlock(); sightings = o.OnCertificateSighting }
	})
	p.waitAdmin(t, "/readyz", 200, "ready")
	p.waitAdmin(t, "/debug/status", 200, `"reason": "Accepted"`)
	if _, body := p.get("/debug/status"); strings.Contains(body, backendcerts.ConditionBackendCertificatesValid) {
		t.Fatalf("the condition before any sighting: %s", body)
	}
	mu.Lock()
	see := sightings
	mu.Unlock()
	if see == nil {
		t.Fatal("serve set no OnCertificateSighting")
	}
	soon := time.Now().Add(10 * 24 * time.Hour).UTC().Truncate(time.Second)
	see(xds.CertificateSighting{NodeID: "envoy-1", Fleet: "quickstart", Cluster: "shop/payments/8443", UpstreamHost: "127.0.0.1:9443",
		Leaf: backendLeaf(t, 0x1234, soon), Version: "TLSv1.3", Cipher: "TLS_AES_128_GCM_SHA256", Seen: time.Now()})
	p.waitAdmin(t, "/debug/status", 200, `"reason": "Expiring"`)
	body := p.waitAdmin(t, "/debug/status", 200, `Envoys of fleet \"quickstart\" saw backend 127.0.0.1:9443 of cluster shop/payments/8443 present certificate \"CN=payments.shop.example\" (serial 1234, issuer \"CN=payments.shop.example\"), which expires on `+soon.Format(time.RFC3339)+`, within --backend-certificate-expiry-warning (720h0m0s)`)
	t.Logf("status: %s", body)
	// /debug/status shows the entry the condition came from.
	p.waitAdmin(t, "/debug/status", 200, `"backendCertificates": [
    {
      "fleet": "quickstart",
      "cluster": "shop/payments/8443",
      "host": "127.0.0.1:9443",
      "node": "envoy-1",
      "subject": "CN=payments.shop.example",`)
	p.waitAdmin(t, "/metrics", 200, `tlsplane_backend_certificate_expiry_timestamp_seconds{cluster="shop/payments/8443",namespace="shop",policy="payments"}`)
	p.waitAdmin(t, "/metrics", 200, `tlsplane_backend_certificate_sightings_total 1`)

	// Renewed, but negotiated at TLS 1.2: below the quickstart's maximum
	// (the default, TLS 1.3).
	see(xds.CertificateSighting{NodeID: "envoy-1", Fleet: "quickstart", Cluster: "shop/payments/8443", UpstreamHost: "127.0.0.1:9443",
		Leaf: backendLeaf(t, 0x1235, time.Now().Add(90*24*time.Hour)), Version: "TLSv1.2", Cipher: "ECDHE-ECDSA-AES128-GCM-SHA256", Seen: time.Now()})
	p.waitAdmin(t, "/debug/status", 200, `negotiated TLSv1.2 (cipher ECDHE-ECDSA-AES128-GCM-SHA256) with backend 127.0.0.1:9443 of cluster shop/payments/8443, below TLSv1.3, the highest version the policy allows`)

	// The policy's maximum lowered to TLS 1.2: what was negotiated is
	// what it prefers.
	file := filepath.Join(dir, "payments-tls.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	write(t, file, strings.Replace(string(data), "tlsplane.io/minimumVersion: TLSv1_2", "tlsplane.io/minimumVersion: TLSv1_2\n    tlsplane.io/maximumVersion: TLSv1_2", 1))
	p.waitAdmin(t, "/debug/status", 200, `"reason": "Valid"`)
	if _, body := p.get("/debug/status"); strings.Contains(body, "BelowPreferredVersion") || strings.Contains(body, `"reason": "Expiring"`) {
		t.Fatalf("an old reason is still shown: %s", body)
	}
}
