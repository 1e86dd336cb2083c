package envoy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// crossNamespaceBackend: a route of gw sending to a Service of shop is
// answered 500 until a ReferenceGrant of shop permits it; the grant is
// added, removed and added again, live, in both API versions.
func crossNamespaceBackend(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	get := func() (response, error) { return e.httpGet("cross-ns.example", "/cross") }
	var seen []string
	step := func(what string, check func(response) error) {
		r := e.await(t, what, get, check)
		seen = append(seen, fmt.Sprintf("%s: %d", what, r.Status))
	}
	defer func() { s.note("cross-namespace-backend-needs-referencegrant", "%s", strings.Join(seen, "; ")) }()

	before := b.shop.counts(t)
	step("no grant", status(500))
	if after := b.shop.counts(t); after.Requests != before.Requests {
		t.Fatalf("without a ReferenceGrant, backend %s was reached: %+v -> %+v", b.shop.name, before, after)
	}
	grant := func(version string) {
		writeManifests(t, e.manifestDir, fileGrantSvc,
			referenceGrant(version, shopNS, "gw-routes", "HTTPRoute", gwNS, "Service"))
	}
	grant("v1beta1")
	step("v1beta1 grant", from(b.shop))
	removeManifest(t, e.manifestDir, fileGrantSvc)
	step("grant removed", status(500))
	grant("v1")
	step("v1 grant", from(b.shop))
}

// crossNamespaceCertificate: a listener whose certificate is a Secret of
// another namespace is not served (no handshake for its hostname) until a
// ReferenceGrant there permits Gateways of gw; then it is, with that
// certificate, and again not once the grant is gone.
func crossNamespaceCertificate(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	var seen []string
	defer func() { s.note("cross-namespace-certificate-needs-referencegrant", "%s", strings.Join(seen, "; ")) }()
	refused := func(what string) {
		err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
			if err := handshake(e.pki.gwCA, e.ports.https, hostCrossGW); err == nil {
				return fmt.Errorf("the handshake for %s succeeded", hostCrossGW)
			}
			return nil
		})
		seen = append(seen, what+": no handshake")
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	refused("no grant")
	// The other listeners of the port are served meanwhile.
	if err := handshake(e.pki.gwCA, e.ports.https, hostAbcGW); err != nil {
		t.Fatalf("SNI %s while %s waits for a grant: %v", hostAbcGW, hostCrossGW, err)
	}
	writeManifests(t, e.manifestDir, fileGrantCert,
		referenceGrant("v1", certsNS, "gw-certificates", "Gateway", gwNS, "Secret"))
	r := e.await(t, "https "+hostCrossGW+" with a grant", func() (response, error) {
		return e.get(e.ports.https, hostCrossGW, "/cross-cert", nil, hostCrossGW)
	}, from(b.c))
	seen = append(seen, fmt.Sprintf("grant: cert %v -> %s", certNames(r.PeerCertificate), r.Echo.Name))
	if c := r.PeerCertificate; c == nil || len(c.DNSNames) != 1 || c.DNSNames[0] != hostCrossGW {
		t.Errorf("SNI %s: Envoy presented %v", hostCrossGW, certNames(c))
	}
	removeManifest(t, e.manifestDir, fileGrantCert)
	refused("grant removed")
}

// removeManifest deletes dir/<file>.yaml, as an operator deletes a file.
func removeManifest(t *testing.T, dir, file string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, file+".yaml")); err != nil {
		t.Fatal(err)
	}
}
