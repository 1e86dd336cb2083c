package inject

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
	"strings"
	"testing"
	"time"
)

// writePair writes a self-signed certificate named cn and its key, with
// modification time at (so a rewrite within the clock's grain is seen).
func writePair(t *testing.T, dir, cn string, at time.Time) (certFile, keyFile string) {
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
	for f, b := range map[string][]byte{
		certFile: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyFile:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f, at, at); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile
}

func leafName(t *testing.T, s *servingCertificate) string {
	t.Helper()
	c, err := s.get(nil)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf.Subject.CommonName
}

// TestServingCertificateRotation: a rotated pair is served from the next
// handshake on; a half-written rotation keeps the previous pair; a bad
// pair at startup is refused naming the files.
func TestServingCertificateRotation(t *testing.T) {
	dir := t.TempDir()
	base := time.Now().Add(-time.Hour)
	certFile, keyFile := writePair(t, dir, "first", base)
	s, err := loadServingCertificate(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := leafName(t, s); got != "first" {
		t.Fatalf("served %q, want first", got)
	}
	writePair(t, dir, "second", base.Add(time.Minute))
	if got := leafName(t, s); got != "second" {
		t.Fatalf("after rotation served %q, want second", got)
	}
	// Half written: the key does not match the certificate yet.
	_, otherKey := writePair(t, t.TempDir(), "third", base)
	b, _ := os.ReadFile(otherKey)
	if err := os.WriteFile(keyFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(keyFile, base.Add(2*time.Minute), base.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := leafName(t, s); got != "second" {
		t.Fatalf("mid-rotation served %q, want the previous pair", got)
	}
	if _, err := loadServingCertificate(certFile, keyFile); err == nil || !strings.Contains(err.Error(), "serving certificate "+certFile) {
		t.Fatalf("a mismatched pair at startup: %v, want an error naming %s", err, certFile)
	}
}
