package harness

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
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Authority is a test CA that issues leaves. A nil *Authority issues
// self-signed leaves.
type Authority struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	PEM  []byte
}

// NewAuthority is a P-256 CA named cn, valid from an hour ago for a day.
func NewAuthority(t testing.TB, cn string) *Authority {
	t.Helper()
	return NewAuthorityUntil(t, cn, time.Now().Add(24*time.Hour))
}

// NewAuthorityUntil is NewAuthority valid until notAfter (an expiring or a
// long-lived CA).
func NewAuthorityUntil(t testing.TB, cn string, notAfter time.Time) *Authority {
	t.Helper()
	return newAuthority(t, cn, notAfter, nil)
}

// NewAuthorityWithCRL is NewAuthority whose certificate names crlURLs in
// its CRL distribution points extension: a self-signed CA's points name
// where its own revocation list is published.
func NewAuthorityWithCRL(t testing.TB, cn string, crlURLs ...string) *Authority {
	t.Helper()
	return newAuthority(t, cn, time.Now().Add(24*time.Hour), crlURLs)
}

func newAuthority(t testing.TB, cn string, notAfter time.Time, crlURLs []string) *Authority {
	t.Helper()
	key := newKey(t, elliptic.P256())
	tmpl := &x509.Certificate{
		SerialNumber:          newSerial(t),
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"tlsplane e2e"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              notAfter,
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		CRLDistributionPoints: crlURLs,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &Authority{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// LeafSpec is what a leaf carries; the zero values mean a P-256 server
// certificate valid from an hour ago for a day.
type LeafSpec struct {
	CommonName   string
	Organization string
	DNSNames     []string
	IPs          []net.IP
	URIs         []string
	// Client makes it a client certificate (ExtKeyUsageClientAuth).
	Client   bool
	Curve    elliptic.Curve
	NotAfter time.Time
}

// Leaf is a certificate and its key as PEM, and the files it was written
// to, if any.
type Leaf struct {
	Cert              *x509.Certificate
	CertPEM, KeyPEM   []byte
	CertFile, KeyFile string
}

// Issue signs a leaf as spec says; a nil ca makes it self-signed.
func (ca *Authority) Issue(t testing.TB, spec LeafSpec) *Leaf {
	t.Helper()
	curve := spec.Curve
	if curve == nil {
		curve = elliptic.P256()
	}
	notAfter := spec.NotAfter
	if notAfter.IsZero() {
		notAfter = time.Now().Add(24 * time.Hour)
	}
	key := newKey(t, curve)
	tmpl := &x509.Certificate{
		SerialNumber: newSerial(t),
		Subject:      pkix.Name{CommonName: spec.CommonName},
		// An expired leaf must still have NotBefore < NotAfter.
		NotBefore:   minTime(time.Now().Add(-time.Hour), notAfter.Add(-time.Hour)),
		NotAfter:    notAfter,
		DNSNames:    spec.DNSNames,
		IPAddresses: spec.IPs,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if spec.Organization != "" {
		tmpl.Subject.Organization = []string{spec.Organization}
	}
	if spec.Client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	for _, s := range spec.URIs {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		tmpl.URIs = append(tmpl.URIs, u)
	}
	parent, signer := tmpl, key
	if ca != nil {
		parent, signer = ca.Cert, ca.Key
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
	return &Leaf{
		Cert:    cert,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
}

// IssueFiles is Issue, written to certFile and keyFile.
func (ca *Authority) IssueFiles(t testing.TB, spec LeafSpec, certFile, keyFile string) *Leaf {
	t.Helper()
	l := ca.Issue(t, spec)
	l.CertFile, l.KeyFile = certFile, keyFile
	l.WriteFiles(t, certFile, keyFile)
	return l
}

// Fingerprint is the SHA-256 of the DER certificate, as 64 hex characters.
func (l *Leaf) Fingerprint() string {
	sum := sha256.Sum256(l.Cert.Raw)
	return hex.EncodeToString(sum[:])
}

// WriteFiles writes the pair where a backend reads it, key first so a
// reloading backend never pairs a new certificate with an old key for long.
func (l *Leaf) WriteFiles(t testing.TB, certFile, keyFile string) {
	t.Helper()
	WriteAtomic(t, keyFile, l.KeyPEM)
	WriteAtomic(t, certFile, l.CertPEM)
}

// WriteAtomic replaces path in one rename, as a watcher expects. The
// temporary file is hidden (a leading dot), which tlsplane's directory
// source skips.
func WriteAtomic(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		t.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		t.Fatal(err)
	}
}

func newKey(t testing.TB, curve elliptic.Curve) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(curve, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// newSerial is random, so no two certificates of a run share one.
func newSerial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// CRL is a PEM revocation list of ca revoking revoked, valid from an hour
// ago until nextUpdate.
func (ca *Authority) CRL(t testing.TB, nextUpdate time.Time, revoked ...*Leaf) []byte {
	t.Helper()
	list := &x509.RevocationList{Number: newSerial(t), ThisUpdate: time.Now().Add(-time.Hour), NextUpdate: nextUpdate}
	if nextUpdate.Before(list.ThisUpdate) {
		list.ThisUpdate = nextUpdate.Add(-time.Hour)
	}
	for _, l := range revoked {
		list.RevokedCertificateEntries = append(list.RevokedCertificateEntries,
			x509.RevocationListEntry{SerialNumber: l.Cert.SerialNumber, RevocationTime: time.Now().Add(-time.Minute)})
	}
	der, err := x509.CreateRevocationList(rand.Reader, list, ca.Cert, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der})
}
