package apiserver

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// The API server reaches a kubelet (for a Pod's logs) at the Node's
// InternalIP and status.daemonEndpoints.kubeletEndpoint.Port, over TLS both
// ways: it verifies the kubelet's serving certificate with this server's CA
// (--kubelet-certificate-authority) and presents a client certificate of
// its own (--kubelet-client-certificate) the kubelet verifies with the same
// CA. The e2e node agent plays the kubelet.

// KubeletClientName is the common name of the API server's kubelet client
// certificate: the one caller a kubelet endpoint answers.
const KubeletClientName = "kube-apiserver-kubelet-client"

// kubeletClientFiles writes the API server's kubelet client certificate
// and key into dir, and returns the flags that make the API server use
// them and trust kubelets this CA issued, at their InternalIP.
func (p *pki) kubeletClientFiles(dir string) ([]string, error) {
	certPEM, keyPEM, err := p.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: KubeletClientName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, fmt.Errorf("kubelet client certificate: %w", err)
	}
	certPath, keyPath := filepath.Join(dir, "kubelet-client.crt"), filepath.Join(dir, "kubelet-client.key")
	if err := os.WriteFile(certPath, certPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return nil, err
	}
	return []string{
		"--kubelet-client-certificate", certPath,
		"--kubelet-client-key", keyPath,
		"--kubelet-certificate-authority", p.caFile,
		"--kubelet-preferred-address-types", "InternalIP",
	}, nil
}

// KubeletServingCertificate is a serving certificate for a kubelet
// endpoint at ip, which the API server trusts.
func (s *Server) KubeletServingCertificate(ip string) (tls.Certificate, error) {
	addr := net.ParseIP(ip)
	if addr == nil {
		return tls.Certificate{}, fmt.Errorf("kubelet serving certificate: %q is not an IP address", ip)
	}
	certPEM, keyPEM, err := s.pki.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kubelet " + ip},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{addr},
	})
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("kubelet serving certificate for %s: %w", ip, err)
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

// KubeletClientCAs verify the client certificate the API server presents
// to kubelets.
func (s *Server) KubeletClientCAs() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(s.pki.ca)
	return pool
}
