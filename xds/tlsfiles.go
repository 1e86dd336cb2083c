package xds

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/tlsplane/tlsplane/certfiles"
)

// tlsFiles is the server certificate, its key and the client CA bundle,
// re-read on a handshake when any file changed (certfiles), so a rotated
// certificate (a renewed Kubernetes Secret swaps its files) needs no
// restart. A broken rotation keeps the last good pair.
type tlsFiles struct {
	cert, key, clientCA string
	onError             func(error)
	files               *certfiles.Files[*tls.Config]
}

func newTLSFiles(cert, key, clientCA string, onError func(error)) *tlsFiles {
	f := &tlsFiles{cert: cert, key: key, clientCA: clientCA, onError: onError}
	f.files = certfiles.New(f.read, cert, key, clientCA)
	return f
}

// serverConfig hands each handshake the current files' configuration.
func (f *tlsFiles) serverConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			cfg, err := f.load()
			if err != nil && f.onError != nil {
				f.onError(err)
			}
			return cfg, nil
		},
	}
}

// load returns the configuration of the files as they are now, re-reading
// them if they changed; on an error it returns the last good
// configuration with the error.
func (f *tlsFiles) load() (*tls.Config, error) {
	cfg, _, err := f.files.Load()
	if err != nil {
		err = fmt.Errorf("xDS TLS: %w", err)
	}
	return cfg, err
}

func (f *tlsFiles) read() (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		// LoadX509KeyPair's errors name the files, never their bytes.
		return nil, fmt.Errorf("certificate %s, key %s: %w", f.cert, f.key, err)
	}
	pem, err := os.ReadFile(f.clientCA)
	if err != nil {
		return nil, fmt.Errorf("client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("client CA %s: no PEM certificate", f.clientCA)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{pair},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		// gRPC requires h2 over TLS.
		NextProtos: []string{"h2"},
	}, nil
}
