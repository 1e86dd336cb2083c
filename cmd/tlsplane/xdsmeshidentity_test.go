package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"io"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/xds"
)

// TestXDSMeshIdentityFlag: with mutual TLS, --xds-mesh-identity is the
// rule mesh fleets get (the default: the ServiceAccount's SPIFFE ID),
// empty leaves them to the fleet template, and a bad template stops
// startup naming the flag.
func TestXDSMeshIdentityFlag(t *testing.T) {
	cert, key := selfSignedFiles(t)
	mtls := []string{"--xds-tls-cert", cert, "--xds-tls-key", key, "--xds-client-ca", cert}
	for _, tc := range []struct {
		name     string
		args     []string
		wantMesh string // "" for no mesh rule
		wantErr  string
	}{
		{"default", nil, xds.DefaultMeshIdentity, ""},
		{"another trust domain", []string{"--xds-mesh-identity", "spiffe://example.org/ns/{namespace}/sa/{serviceaccount}"}, "spiffe://example.org/ns/{namespace}/sa/{serviceaccount}", ""},
		{"off", []string{"--xds-mesh-identity", ""}, "", ""},
		{"bad template", []string{"--xds-mesh-identity", "spiffe://x/ns/{namespace}"}, "", "--xds-mesh-identity: mesh identity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			f := registerXDSAuthFlags(fs)
			if err := fs.Parse(append(append([]string{}, mtls...), tc.args...)); err != nil {
				t.Fatal(err)
			}
			sec, err := f.serverOptions("0.0.0.0:18000", slog.New(slog.DiscardHandler))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if m := sec.Fleet.Mesh(); m != nil {
				got = m.String()
			}
			if got != tc.wantMesh {
				t.Errorf("mesh rule %q, want %q", got, tc.wantMesh)
			}
			if sec.Fleet.String() != xds.DefaultFleetIdentity {
				t.Errorf("fleet template %q, want %q unchanged", sec.Fleet, xds.DefaultFleetIdentity)
			}
		})
	}
}

// selfSignedFiles writes a self-signed certificate (its own CA) and key.
func selfSignedFiles(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tlsplane"}, DNSNames: []string{"tlsplane"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
