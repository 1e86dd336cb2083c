package backendcerts

import (
	"crypto/x509"
	"fmt"
	"time"
	"unicode/utf8"
)

// Bounds on what one sighting carries: a backend chooses its certificate,
// and the inventory must not grow with it.
const (
	maxField = 256
	maxSANs  = 16
)

// Certificate is what the inventory keeps of a backend's leaf certificate.
type Certificate struct {
	Subject string `json:"subject"`
	Issuer  string `json:"issuer"`
	// Serial is lower-case hex, as openssl prints it without colons.
	Serial    string    `json:"serial"`
	SANs      []string  `json:"sans,omitempty"`
	NotBefore time.Time `json:"notBefore"`
	NotAfter  time.Time `json:"notAfter"`
}

// CertificateOf describes c; long names are cut, and at most 16 subject
// alternative names are kept (DNS:, IP:, URI:, email: prefixed).
func CertificateOf(c *x509.Certificate) Certificate {
	out := Certificate{
		Subject: cut(c.Subject.String()), Issuer: cut(c.Issuer.String()),
		NotBefore: c.NotBefore.UTC(), NotAfter: c.NotAfter.UTC(),
	}
	if c.SerialNumber != nil {
		out.Serial = cut(fmt.Sprintf("%x", c.SerialNumber))
	}
	add := func(prefix, v string) {
		if len(out.SANs) < maxSANs {
			out.SANs = append(out.SANs, cut(prefix+v))
		}
	}
	for _, n := range c.DNSNames {
		add("DNS:", n)
	}
	for _, ip := range c.IPAddresses {
		add("IP:", ip.String())
	}
	for _, u := range c.URIs {
		add("URI:", u.String())
	}
	for _, e := range c.EmailAddresses {
		add("email:", e)
	}
	return out
}

// Sighting is one upstream TLS connection an Envoy reported: the
// certificate the backend presented and what was negotiated.
type Sighting struct {
	Node, Fleet string
	// Cluster is the Envoy cluster; Host the upstream address ("10.0.0.7:8443").
	Cluster, Host string
	Certificate   Certificate
	// Version and Cipher as Envoy names them: "TLSv1.3", "TLS_AES_128_GCM_SHA256".
	Version, Cipher string
}

// cut bounds a string to maxField bytes, on a rune boundary.
func cut(s string) string {
	if len(s) <= maxField {
		return s
	}
	s = s[:maxField]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// bounded is s with every field cut: sightings come from Envoys, whose
// parsers bound them too, but the inventory does not rely on it.
func (s Sighting) bounded() Sighting {
	s.Node, s.Fleet, s.Cluster, s.Host, s.Version, s.Cipher = cut(s.Node), cut(s.Fleet), cut(s.Cluster), cut(s.Host), cut(s.Version), cut(s.Cipher)
	c := &s.Certificate
	c.Subject, c.Issuer, c.Serial = cut(c.Subject), cut(c.Issuer), cut(c.Serial)
	if len(c.SANs) > maxSANs {
		c.SANs = c.SANs[:maxSANs]
	}
	sans := make([]string, len(c.SANs))
	for i, n := range c.SANs {
		sans[i] = cut(n)
	}
	c.SANs = sans
	return s
}
