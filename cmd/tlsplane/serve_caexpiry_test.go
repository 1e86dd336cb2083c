package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// selfSignedCA is a CA certificate, PEM, valid until notAfter.
func selfSignedCA(t *testing.T, notAfter time.Time) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "expiring CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// TestServeWarnsOfAnExpiringCA: a CA that expires in ten days makes the
// accepted policy's message warn, and its expiry is a metric per source.
func TestServeWarnsOfAnExpiringCA(t *testing.T) {
	dir := copyQuickstart(t)
	notAfter := time.Now().Add(10 * 24 * time.Hour).UTC().Truncate(time.Second)
	indented := "    " + strings.ReplaceAll(strings.TrimSpace(selfSignedCA(t, notAfter)), "\n", "\n    ")
	write(t, filepath.Join(dir, "ca-configmap.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  namespace: shop\n  name: payments-ca\ndata:\n  ca.crt: |\n"+indented+"\n")
	p := startServe(t, dir)
	p.waitAdmin(t, "/readyz", 200, "ready")
	p.waitAdmin(t, "/debug/status", 200, fmt.Sprintf("Policy is accepted; warning: a CA certificate in ConfigMap shop/payments-ca expires at %s, within 720h0m0s",
		notAfter.Format(time.RFC3339)))
	p.waitAdmin(t, "/metrics", 200, `tlsplane_ca_not_after_timestamp_seconds{source="CA/shop/configmap/payments-ca"} `+strconv.FormatFloat(float64(notAfter.Unix()), 'g', -1, 64))

	// A 7-day window says nothing yet.
	q := startServe(t, dir, "--ca-expiry-warning", "168h")
	q.waitAdmin(t, "/debug/status", 200, `"message": "Policy is accepted"`)
}
