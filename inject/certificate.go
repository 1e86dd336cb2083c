package inject

import (
	"crypto/tls"
	"fmt"

	"github.com/tlsplane/tlsplane/certfiles"
)

// servingCertificate is the webhook's certificate, read again when its
// files change (certfiles): cert-manager and kubelet-synced Secrets
// rotate them in place, and the API server must never see an expired one.
type servingCertificate struct {
	certFile, keyFile string
	files             *certfiles.Files[*tls.Certificate]
}

// loadServingCertificate reads the pair once, so a bad pair stops startup.
func loadServingCertificate(certFile, keyFile string) (*servingCertificate, error) {
	s := &servingCertificate{certFile: certFile, keyFile: keyFile}
	s.files = certfiles.New(func() (*tls.Certificate, error) {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		return &pair, err
	}, certFile, keyFile)
	if _, err := s.get(nil); err != nil {
		return nil, err
	}
	return s, nil
}

// get is tls.Config.GetCertificate: the pair as the files hold it now;
// when a rotation is half written, the previous pair until both parse.
func (s *servingCertificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	pair, ok, err := s.files.Load()
	if ok {
		return pair, nil
	}
	return nil, fmt.Errorf("serving certificate %s, key %s: %w", s.certFile, s.keyFile, err)
}
