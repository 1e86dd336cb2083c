package echoserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"time"
)

// The image's own key pair, baked in at these paths (Istio's
// Dockerfile.app), which the mesh manifests' --crt and --key name.
const (
	imageCertFile = "/cert.crt"
	imageKeyFile  = "/cert.key"
)

// loadCertificate is the --crt/--key pair. The node agent runs the
// server on the machine's file system, where the image's baked-in test
// pair is not: for exactly those paths, when absent, the server makes a
// self-signed pair of its own (nothing checks the original's, a test
// certificate every client skips verifying). Any other missing file is an
// error naming it, as in the original.
func loadCertificate(certFile, keyFile, hostname string) (tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err == nil {
		return cert, nil
	}
	if certFile == imageCertFile && keyFile == imageKeyFile && missing(certFile) && missing(keyFile) {
		return selfSigned(hostname)
	}
	return tls.Certificate{}, fmt.Errorf("could not load TLS keys --crt %q --key %q: %w", certFile, keyFile, err)
}

func missing(path string) bool {
	_, err := os.Stat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// selfSigned is a P-256 certificate for hostname and localhost, valid for
// a year from an hour ago.
func selfSigned(hostname string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, err
	}
	names := []string{"localhost"}
	if hostname != "" {
		names = append([]string{hostname}, names...)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: names[0], Organization: []string{"e2e echo-advanced"}},
		DNSNames:     names,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
