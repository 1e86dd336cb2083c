package kube

import (
	"path/filepath"
	"testing"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// issueServing writes a serving certificate for dnsName, signed by ca, and
// its key to dir/cert.pem and dir/key.pem, replacing them atomically (the
// backend re-reads them when they change).
func issueServing(t *testing.T, ca *harness.Authority, dir, dnsName string) (certFile, keyFile string) {
	t.Helper()
	l := ca.IssueFiles(t, harness.LeafSpec{CommonName: dnsName, DNSNames: []string{dnsName}},
		filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	return l.CertFile, l.KeyFile
}
