package envoy

import (
	"path/filepath"
	"testing"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// The identities the main test leaf carries; scenarios match against them.
const (
	hostAbc   = "abc.example.com"
	hostOther = "other.example.com"
	spiffeID  = "spiffe://abc.example.com/test-identity"
)

// issue writes dir/name.crt and dir/name.key: a server leaf with the three
// identities above, and whatever spec adds (a curve, an expiry); a nil ca
// makes it self-signed.
func issue(t *testing.T, ca *harness.Authority, dir, name string, spec harness.LeafSpec) *harness.Leaf {
	t.Helper()
	spec.CommonName, spec.Organization = hostAbc, "tlsplane e2e "+name
	spec.DNSNames, spec.URIs = []string{hostAbc, hostOther}, []string{spiffeID}
	return ca.IssueFiles(t, spec, filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key"))
}
