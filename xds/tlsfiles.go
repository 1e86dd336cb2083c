package xds

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"time"
)

// tlsFiles is the server certificate, its key and the client CA bundle,
// re-read on a handshake when any file's size, mode or modification time
// changed, so a rotated certificate (a renewed Kubernetes Secret swaps its
// files) needs no restart. A broken rotation keeps the last good pair.
type tlsFiles struct {
	cert, key, clientCA string
	onError             func(error)

	mu      sync.Mutex
	stamp   [3]fileStamp
	current *tls.Config
}

type fileStamp struct {
	size    int64
	mode    os.FileMode
	modTime time.Time
}

func stampOf(path string) (fileStamp, error) {
	info, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{size: info.Size(), mode: info.Mode(), modTime: info.ModTime()}, nil
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
// them if they changed; on a read error it returns the last good
// configuration with the error.
func (f *tlsFiles) load() (*tls.Config, error) {
	var stamp [3]fileStamp
	for i, path := range []string{f.cert, f.key, f.clientCA} {
		s, err := stampOf(path)
		if err != nil {
			return f.last(), fmt.Errorf("xDS TLS: %w", err)
		}
		stamp[i] = s
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.current != nil && stamp == f.stamp {
		return f.current, nil
	}
	cfg, err := f.read()
	if err != nil {
		return f.current, err
	}
	f.current, f.stamp = cfg, stamp
	return cfg, nil
}

func (f *tlsFiles) last() *tls.Config {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.current
}

func (f *tlsFiles) read() (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		// LoadX509KeyPair's errors name the files, never their bytes.
		return nil, fmt.Errorf("xDS TLS: certificate %s, key %s: %w", f.cert, f.key, err)
	}
	pem, err := os.ReadFile(f.clientCA)
	if err != nil {
		return nil, fmt.Errorf("xDS TLS: client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("xDS TLS: client CA %s: no PEM certificate", f.clientCA)
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
