package tlsopts

import (
	"strings"
	"testing"
)

func TestParseCRLDistributionPoints(t *testing.T) {
	for _, value := range []CRLFetchPolicy{CRLFailClosed, CRLKeepLastGood} {
		o, err := Parse(specOptions("tlsplane.io/crlDistributionPoints", string(value)), false)
		if err != nil || o.CRLDistributionPoints != value {
			t.Errorf("%s: got %q, %v", value, o.CRLDistributionPoints, err)
		}
	}
	cases := []struct {
		name    string
		options []string
		want    string
	}{
		{"unknown value", []string{"tlsplane.io/crlDistributionPoints", "failclosed"},
			`option tlsplane.io/crlDistributionPoints: "failclosed" is not FailClosed or KeepLastGood`},
		{"with crlRef", []string{"tlsplane.io/crlDistributionPoints", "KeepLastGood", "tlsplane.io/crlRef", "ConfigMap/crl"},
			`option tlsplane.io/crlDistributionPoints: "KeepLastGood" cannot be used with tlsplane.io/crlRef: a policy has one source of revocation lists`},
		{"with insecureSkipVerify", []string{"tlsplane.io/crlDistributionPoints", "FailClosed", "tlsplane.io/insecureSkipVerify", "true"},
			`option tlsplane.io/insecureSkipVerify: "true" turns certificate validation off, so tlsplane.io/crlDistributionPoints cannot be honoured`},
	}
	for _, c := range cases {
		_, err := Parse(specOptions(c.options...), true)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %s", c.name, err, c.want)
		}
	}
	if !strings.Contains(strings.Join(optionNames(), ","), "crlDistributionPoints") {
		t.Error("crlDistributionPoints is not listed among the option names")
	}
}
