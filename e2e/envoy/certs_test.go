package envoy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The identities the main test leaf carries; scenarios match against them.
const (
	hostAbc   = "abc.example.com"
	hostOther = "other.example.com"
	spiffeID  = "spiffe://abc.example.com/test-identity"
)

// authority is a test CA that can issue leaves.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// leaf is a certificate and key, as PEM and as files a backend serves.
type leaf struct {
	cert     *x509.Certificate
	certPEM  []byte
	keyPEM   []byte
	certFile string
	keyFile  string
}

// fingerprint is the SHA-256 of the DER certificate, as 64 hex characters.
func (l *leaf) fingerprint() string {
	sum := sha256.Sum256(l.cert.Raw)
	return hex.EncodeToString(sum[:])
}

var serial int64 = 1000

func nextSerial() *big.Int { serial++; return big.NewInt(serial) }

func newAuthority(t *testing.T, cn string) *authority {
	t.Helper()
	key := mustKey(t, elliptic.P256())
	tmpl := &x509.Certificate{
		SerialNumber:          nextSerial(),
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"tlsplane e2e"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &authority{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// leafSpec says how a leaf differs from the default one: the three
// identities above, P-256, valid now.
type leafSpec struct {
	curve    elliptic.Curve
	notAfter time.Time
}

// issue signs a server leaf; a nil authority makes it self-signed.
func (ca *authority) issue(t *testing.T, dir, name string, spec leafSpec) *leaf {
	t.Helper()
	curve := spec.curve
	if curve == nil {
		curve = elliptic.P256()
	}
	notAfter := spec.notAfter
	if notAfter.IsZero() {
		notAfter = time.Now().Add(24 * time.Hour)
	}
	key := mustKey(t, curve)
	uri, _ := url.Parse(spiffeID)
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(),
		Subject:      pkix.Name{CommonName: hostAbc, Organization: []string{"tlsplane e2e " + name}},
		NotBefore:    minTime(time.Now().Add(-time.Hour), notAfter.Add(-time.Hour)),
		NotAfter:     notAfter,
		DNSNames:     []string{hostAbc, hostOther},
		URIs:         []*url.URL{uri},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	parent, signer := tmpl, key
	if ca != nil {
		parent, signer = ca.cert, ca.key
	} else {
		// A self-signed leaf is its own trust anchor, which needs certSign.
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		tmpl.BasicConstraintsValid = true
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	l := &leaf{
		cert:     cert,
		certPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:   pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		certFile: filepath.Join(dir, name+".crt"),
		keyFile:  filepath.Join(dir, name+".key"),
	}
	l.writeFiles(t, l.certFile, l.keyFile)
	return l
}

// writeFiles writes the pair where a backend reads it, key first so a
// reloading backend never pairs a new certificate with an old key for long.
func (l *leaf) writeFiles(t *testing.T, certFile, keyFile string) {
	t.Helper()
	writeAtomic(t, keyFile, l.keyPEM)
	writeAtomic(t, certFile, l.certPEM)
}

func mustKey(t *testing.T, curve elliptic.Curve) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(curve, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// writeAtomic replaces a file in one rename, as a watcher expects. The
// temporary file lives in the parent directory, so a directory watcher
// never sees a half-written file.
func writeAtomic(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp, err := os.CreateTemp(filepath.Dir(filepath.Dir(path)), ".tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmp.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		t.Fatal(err)
	}
}
