package faults

import (
	"net"
	"path/filepath"
	"testing"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// The names every backend certificate carries.
const (
	hostMain  = "backend.faults.example"
	hostOther = "other.faults.example"
)

// pki is one CA and the backend leaf it signed, as files.
type pki struct {
	caPEM             []byte
	certFile, keyFile string
}

func newPKI(t *testing.T, dir string) *pki {
	t.Helper()
	ca := harness.NewAuthority(t, "tlsplane faults CA")
	leaf := ca.IssueFiles(t, harness.LeafSpec{CommonName: hostMain, DNSNames: []string{hostMain, hostOther}},
		filepath.Join(dir, "backend.crt"), filepath.Join(dir, "backend.key"))
	return &pki{caPEM: ca.PEM, certFile: leaf.CertFile, keyFile: leaf.KeyFile}
}

// xdsPKI is the xDS channel's CA and the files tlsplane and Envoys use.
type xdsPKI struct {
	ca     *harness.Authority
	dir    string
	caFile string
}

func newXDSPKI(t *testing.T, dir string) *xdsPKI {
	t.Helper()
	p := &xdsPKI{ca: harness.NewAuthority(t, "tlsplane faults xDS CA"), dir: dir, caFile: filepath.Join(dir, "xds-ca.crt")}
	harness.WriteAtomic(t, p.caFile, p.ca.PEM)
	return p
}

// issue writes name.crt and name.key: a server certificate for 127.0.0.1
// when server, else a client certificate with the URI SAN uri.
func (p *xdsPKI) issue(t *testing.T, name string, server bool, uri string) (certFile, keyFile string) {
	t.Helper()
	spec := harness.LeafSpec{CommonName: name, Client: !server}
	if server {
		spec.IPs = []net.IP{net.IPv4(127, 0, 0, 1)}
		spec.DNSNames = []string{xdsServerName}
	}
	if uri != "" {
		spec.URIs = []string{uri}
	}
	l := p.ca.IssueFiles(t, spec, filepath.Join(p.dir, name+".crt"), filepath.Join(p.dir, name+".key"))
	return l.CertFile, l.KeyFile
}

// xdsServerName is the name tlsplane's xDS certificate carries.
const xdsServerName = "tlsplane-xds.faults.example"
