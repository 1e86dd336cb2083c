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
	o, err := Parse(specOptions("tlsplane.io/crlDistributionPoints", "KeepLastGood", "tlsplane.io/crlDistributionPointURLs", " http://crl.example.com/issuing.crl ,https://pki.internal/root.crl"), false)
	if err != nil || len(o.CRLDistributionPointURLs) != 2 || o.CRLDistributionPointURLs[0] != "http://crl.example.com/issuing.crl" {
		t.Errorf("crlDistributionPointURLs: got %q, %v", o.CRLDistributionPointURLs, err)
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
		{"URLs without the policy", []string{"tlsplane.io/crlDistributionPointURLs", "http://crl.example.com/issuing.crl"},
			`option tlsplane.io/crlDistributionPointURLs: "http://crl.example.com/issuing.crl" needs tlsplane.io/crlDistributionPoints (FailClosed or KeepLastGood)`},
		{"URL of another scheme", []string{"tlsplane.io/crlDistributionPoints", "FailClosed", "tlsplane.io/crlDistributionPointURLs", "http://a.example/x.crl, ldap://dc/x"},
			`option tlsplane.io/crlDistributionPointURLs: "ldap://dc/x" is not an http:// or https:// URL without user information`},
		{"URL with a user", []string{"tlsplane.io/crlDistributionPoints", "FailClosed", "tlsplane.io/crlDistributionPointURLs", "http://u:p@a.example/x.crl"},
			`option tlsplane.io/crlDistributionPointURLs: "http://u:p@a.example/x.crl" is not an http:// or https:// URL without user information`},
		{"too many URLs", []string{"tlsplane.io/crlDistributionPoints", "FailClosed", "tlsplane.io/crlDistributionPointURLs", "http://a/1,http://a/2,http://a/3,http://a/4,http://a/5,http://a/6,http://a/7,http://a/8,http://a/9"},
			`option tlsplane.io/crlDistributionPointURLs: "http://a/1,http://a/2,http://a/3,http://a/4,http://a/5,http://a/6,http://a/7,http://a/8,http://a/9" lists 9 URLs, more than 8`},
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
