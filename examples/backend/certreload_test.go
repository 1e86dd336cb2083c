package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writePair(t *testing.T, dir, cn string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func servedCN(t *testing.T, r *certReloader) string {
	t.Helper()
	c, err := r.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf.Subject.CommonName
}

func TestCertReloaderSwitchesWhenFilesChange(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := writePair(t, dir, "first")
	r, err := newCertReloader(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if cn := servedCN(t, r); cn != "first" {
		t.Fatalf("serves %q, want first", cn)
	}
	writePair(t, dir, "second")
	// Size alone may not change; a later mtime must be seen.
	later := time.Now().Add(2 * time.Second)
	_ = os.Chtimes(certFile, later, later)
	if cn := servedCN(t, r); cn != "second" {
		t.Fatalf("after rewriting the files serves %q, want second", cn)
	}
}

func TestCertReloaderKeepsLastGoodPair(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := writePair(t, dir, "good")
	r, err := newCertReloader(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, []byte("half-written"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cn := servedCN(t, r); cn != "good" {
		t.Fatalf("with a broken file serves %q, want the last good pair", cn)
	}
}

func TestServerTLSConfigRejectsBadFlags(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := writePair(t, dir, "x")
	r, _ := newCertReloader(certFile, keyFile)
	for _, c := range []struct{ min, max, curves string }{
		{"1.1", "1.3", ""}, {"1.3", "1.2", ""}, {"1.2", "1.3", "P-999"},
	} {
		if _, err := serverTLSConfig(c.min, c.max, c.curves, r, &counters{}); err == nil {
			t.Errorf("min %s max %s curves %q: want an error", c.min, c.max, c.curves)
		}
	}
	cfg, err := serverTLSConfig("1.2", "1.2", "P-384", r, &counters{})
	if err != nil || len(cfg.CurvePreferences) != 1 || cfg.MaxVersion != 0x0303 {
		t.Errorf("1.2-only P-384 config: %v %+v", err, cfg)
	}
}
