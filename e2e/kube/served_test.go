package kube

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// expectServedCA waits until the served snapshot trusts exactly the CA named
// cn in its SDS secrets, or, with cn "", serves no CA secret at all (a policy
// that is not accepted fails closed without one).
func expectServedCA(t *testing.T, cp *controlPlane, ns, cn string) served {
	t.Helper()
	return expectServedCAWithin(t, statusWait, cp, ns, cn)
}

// expectServedCAWithin is expectServedCA with its own bound, for a change
// that may wait on a reflector's backoff.
func expectServedCAWithin(t *testing.T, timeout time.Duration, cp *controlPlane, ns, cn string) served {
	t.Helper()
	var s served
	eventually(t, timeout, fmt.Sprintf("%s serves CA %q for namespace %s", cp.name, cn, ns), func() error {
		body, err := cp.get("/debug/snapshot?node=e2e")
		if err != nil {
			return err
		}
		if s, err = parseSnapshot(body); err != nil {
			return err
		}
		var names []string
		for _, bundle := range s.caBundles {
			names = append(names, commonNames(bundle)...)
		}
		switch {
		case cn == "" && len(names) > 0:
			return fmt.Errorf("serves CAs %v, want none", names)
		case cn != "" && !slices.Equal(names, []string{cn}):
			return fmt.Errorf("serves CAs %v, want [%s]; secrets in the dump:\n%s", names, cn, secretsPart(body))
		}
		return nil
	})
	return s
}

// commonNames lists the subjects of the certificates in a PEM bundle.
func commonNames(bundle string) []string {
	var out []string
	rest := []byte(bundle)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return out
		}
		if cert, err := x509.ParseCertificate(block.Bytes); err == nil {
			out = append(out, cert.Subject.CommonName)
		}
	}
}

// sameFor checks that f returns the same value for the whole period: used
// to show that something does not happen.
func sameFor(t *testing.T, period time.Duration, what string, f func() string) {
	t.Helper()
	first := f()
	for end := time.Now().Add(period); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if got := f(); got != first {
			t.Fatalf("%s changed from %q to %q", what, first, got)
		}
	}
}

// secretsPart is the SDS part of a config dump, for failure messages.
func secretsPart(body []byte) string {
	s := string(body)
	if i := strings.Index(s, "SecretsConfigDump"); i >= 0 {
		s = s[i:]
	}
	return tail(s, 3000)
}
