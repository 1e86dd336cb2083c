package inject

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// servingCertificate is the webhook's certificate, read again when its
// files change: cert-manager and kubelet-synced Secrets rotate them in
// place, and the API server must never see an expired one.
type servingCertificate struct {
	certFile, keyFile string

	mu      sync.Mutex
	stamp   [2]time.Time
	current *tls.Certificate
}

// loadServingCertificate reads the pair once, so a bad pair stops startup.
func loadServingCertificate(certFile, keyFile string) (*servingCertificate, error) {
	s := &servingCertificate{certFile: certFile, keyFile: keyFile}
	if _, err := s.get(nil); err != nil {
		return nil, err
	}
	return s, nil
}

// get is tls.Config.GetCertificate: the pair as the files hold it now;
// when a rotation is half written, the previous pair until both parse.
func (s *servingCertificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	stamp, err := s.modTimes()
	if err == nil && stamp == s.stamp && s.current != nil {
		return s.current, nil
	}
	pair, loadErr := tls.LoadX509KeyPair(s.certFile, s.keyFile)
	if loadErr != nil {
		if s.current != nil {
			return s.current, nil
		}
		return nil, fmt.Errorf("serving certificate %s, key %s: %w", s.certFile, s.keyFile, loadErr)
	}
	s.current, s.stamp = &pair, stamp
	return s.current, nil
}

func (s *servingCertificate) modTimes() ([2]time.Time, error) {
	var t [2]time.Time
	for i, f := range []string{s.certFile, s.keyFile} {
		info, err := os.Stat(f)
		if err != nil {
			return t, err
		}
		t[i] = info.ModTime()
	}
	return t, nil
}
