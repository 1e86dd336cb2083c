package harness

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// StartInjector runs `tlsplane inject` (bin) on loopback over TLS, its
// serving certificate for 127.0.0.1 from a CA of its own, with args after
// its address and certificate flags, and waits until /healthz answers.
// It returns the process, its address and the CA: a webhook
// configuration's caBundle.
func StartInjector(t testing.TB, logDir, bin string, args ...string) (*Process, string, *Authority) {
	t.Helper()
	dir := t.TempDir()
	ca := NewAuthority(t, "tlsplane inject test CA")
	leaf := ca.IssueFiles(t, LeafSpec{CommonName: "127.0.0.1", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}},
		filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	addr := "127.0.0.1:" + strconv.Itoa(FreePort(t))
	p := Start(t, logDir, "tlsplane-inject", bin, append([]string{"inject", "--address", addr,
		"--tls-cert", leaf.CertFile, "--tls-key", leaf.KeyFile}, args...)...)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM)
	probe := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	WaitProbe(t, p, 30*time.Second, func() error {
		resp, err := probe.Get("https://" + addr + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("tlsplane inject /healthz: %s", resp.Status)
		}
		return nil
	})
	return p, addr, ca
}
