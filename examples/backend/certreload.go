package main

import (
	"crypto/tls"
	"fmt"
	"log"
	"os"
	"sync"
	"time"
)

// certReloader serves the certificate currently in the files, so a CA
// rotation can switch the backend's certificate without a restart. A cheap
// stat per handshake decides whether to re-read.
type certReloader struct {
	certFile, keyFile string

	mu      sync.Mutex
	current *tls.Certificate
	stamp   fileStamp
}

// fileStamp identifies one version of the pair of files.
type fileStamp struct {
	certMod, keyMod   time.Time
	certSize, keySize int64
}

func newCertReloader(certFile, keyFile string) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile}
	if _, err := r.certificate(); err != nil {
		return nil, err
	}
	return r, nil
}

// GetCertificate is tls.Config.GetCertificate.
func (r *certReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.certificate()
}

func (r *certReloader) certificate() (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	stamp, err := r.statFiles()
	if err == nil && r.current != nil && stamp == r.stamp {
		return r.current, nil
	}
	if err != nil {
		if r.current != nil {
			log.Printf("backend: keeping the previous certificate: %v", err)
			return r.current, nil
		}
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		// A half-written pair is expected during a rotation: keep serving.
		if r.current != nil {
			log.Printf("backend: keeping the previous certificate: %v", err)
			return r.current, nil
		}
		return nil, fmt.Errorf("loading %s and %s: %w", r.certFile, r.keyFile, err)
	}
	if r.current != nil {
		log.Printf("backend: reloaded certificate from %s", r.certFile)
	}
	r.current, r.stamp = &cert, stamp
	return r.current, nil
}

func (r *certReloader) statFiles() (fileStamp, error) {
	c, err := os.Stat(r.certFile)
	if err != nil {
		return fileStamp{}, err
	}
	k, err := os.Stat(r.keyFile)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{certMod: c.ModTime(), keyMod: k.ModTime(), certSize: c.Size(), keySize: k.Size()}, nil
}
