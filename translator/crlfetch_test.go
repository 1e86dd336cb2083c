package translator_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/input"
)

const crlURL = "http://crl.example.com/ca.crl"

// dpCA is a self-signed CA whose CRL distribution point is crlURL, and a
// list it signed.
type dpCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  string
}

func newDPCA(t *testing.T, name string, points ...string) dpCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: goldenNow.Add(-time.Hour), NotAfter: goldenNow.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		CRLDistributionPoints: append([]string{crlURL}, points...),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return dpCA{cert: cert, key: key, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

func (ca dpCA) list(t *testing.T, number int64) []byte {
	t.Helper()
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{
		Number: big.NewInt(number), ThisUpdate: goldenNow.Add(-time.Minute), NextUpdate: goldenNow.Add(time.Hour),
	}, ca.cert, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// crlCase is the ca-configmap case trusting ca, with the option.
func crlCase(t *testing.T, ca dpCA, option string, fetched ...*input.FetchedCRL) translator.Inputs {
	in := readCase(t, "ca-configmap")
	for i, cm := range in.ConfigMaps {
		cm = cm.DeepCopy()
		cm.Data = map[string]string{"ca.crt": ca.pem}
		in.ConfigMaps[i] = cm
	}
	p := in.Policies[0].DeepCopy()
	p.Spec.Options = map[gwv1.AnnotationKey]gwv1.AnnotationValue{"tlsplane.io/crlDistributionPoints": gwv1.AnnotationValue(option)}
	in.Policies = []*gwv1.BackendTLSPolicy{p}
	in.FetchedCRLs = fetched
	return in
}

func fetchedCRL(der []byte, errText string, expired bool) *input.FetchedCRL {
	f := &input.FetchedCRL{ObjectMeta: metav1.ObjectMeta{Name: crlURL}, DER: der, Error: errText, Expired: expired}
	if der != nil {
		f.FetchedAt, f.ThisUpdate, f.NextUpdate = goldenNow.Add(-time.Minute), goldenNow.Add(-time.Minute), goldenNow.Add(time.Hour)
	}
	if errText != "" {
		f.ErrorSince = goldenNow
	}
	return f
}

// servedCRL is the revocation list in the policy's CA secret; "" for none.
func servedCRL(out translator.Output) string {
	for _, s := range out.Secrets {
		if v, ok := s.Type.(*tlsv3.Secret_ValidationContext); ok && strings.HasPrefix(s.Name, "CA/") {
			return v.ValidationContext.GetCrl().GetInlineString()
		}
	}
	return ""
}

func policyCondition(st gwv1.PolicyStatus, typ string) *metav1.Condition {
	if len(st.Ancestors) == 0 {
		return nil
	}
	for i, c := range st.Ancestors[0].Conditions {
		if c.Type == typ {
			return &st.Ancestors[0].Conditions[i]
		}
	}
	return nil
}

// A policy with tlsplane.io/crlDistributionPoints wants its CA's
// distribution point fetched, serves the fetched list in its CA secret when
// it is good, and fails closed or keeps the last good list as asked.
func TestCRLDistributionPoints(t *testing.T) {
	ca, other := newDPCA(t, "dp ca"), newDPCA(t, "other ca")
	good := ca.list(t, 1)
	nn := types.NamespacedName{Namespace: "shop", Name: "pay-tls"}
	on := translator.Options{CRLFetch: true}
	tests := []struct {
		name      string
		option    string
		fetched   *input.FetchedCRL
		opts      translator.Options
		accepted  bool
		message   string // in Accepted (rejected) or RevocationListsFresh
		fresh     string // RevocationListsFresh reason; "" for no condition
		served    bool
		wantsURLs bool
	}{
		{"fetching off", "FailClosed", nil, translator.Options{}, false,
			`option tlsplane.io/crlDistributionPoints: "FailClosed": fetching revocation lists is off: the control plane was not started with --crl-fetch-allow`, "", false, false},
		{"not fetched yet", "FailClosed", nil, on, false,
			`option tlsplane.io/crlDistributionPoints: "FailClosed": the list at http://crl.example.com/ca.crl is not fetched yet`, "Unreachable", false, true},
		{"never fetched, keep last good has none", "KeepLastGood", fetchedCRL(nil, "connection refused", false), on, false,
			"the list at http://crl.example.com/ca.crl cannot be fetched since 2026-01-01T00:00:00Z: connection refused", "Unreachable", false, true},
		{"fresh", "FailClosed", fetchedCRL(good, "", false), on, true, "the lists are fresh: http://crl.example.com/ca.crl", "Fresh", true, true},
		{"stale, fail closed", "FailClosed", fetchedCRL(good, "HTTP 503", false), on, false,
			"the list at http://crl.example.com/ca.crl could not be refreshed since 2026-01-01T00:00:00Z: HTTP 503 (last good list fetched 2025-12-31T23:59:00Z", "Stale", false, true},
		{"stale, keep last good", "KeepLastGood", fetchedCRL(good, "HTTP 503", false), on, true,
			"the list at http://crl.example.com/ca.crl could not be refreshed since 2026-01-01T00:00:00Z: HTTP 503", "Stale", true, true},
		{"expired, keep last good", "KeepLastGood", fetchedCRL(good, "HTTP 503", true), on, true,
			"is past its nextUpdate, so Envoy refuses every certificate of its CA", "Expired", true, true},
		{"signed by another key", "KeepLastGood", fetchedCRL(other.list(t, 1), "", false), on, false,
			`the list at http://crl.example.com/ca.crl (issuer "CN=other ca") is not signed by a CA the policy trusts`, "Unreachable", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var fetched []*input.FetchedCRL
			if tc.fetched != nil {
				fetched = append(fetched, tc.fetched)
			}
			out := translator.Translate(crlCase(t, ca, tc.option, fetched...), nil, goldenNow, tc.opts)
			st := out.Statuses[nn]
			accepted := policyCondition(st, "Accepted")
			if accepted == nil || (accepted.Status == metav1.ConditionTrue) != tc.accepted {
				t.Fatalf("Accepted = %+v, want accepted %v", accepted, tc.accepted)
			}
			fresh := policyCondition(st, "tlsplane.io/RevocationListsFresh")
			switch {
			case tc.fresh == "" && fresh != nil:
				t.Errorf("RevocationListsFresh = %+v, want none", fresh)
			case tc.fresh != "" && (fresh == nil || fresh.Reason != tc.fresh || (fresh.Status == metav1.ConditionTrue) != (tc.fresh == "Fresh")):
				t.Errorf("RevocationListsFresh = %+v, want reason %s", fresh, tc.fresh)
			}
			message := accepted.Message
			if tc.accepted {
				message = fresh.Message
			} else if resolved := policyCondition(st, "ResolvedRefs"); resolved.Status != metav1.ConditionFalse || !strings.Contains(resolved.Message, tc.message) {
				t.Errorf("ResolvedRefs = %+v, want False naming %q", resolved, tc.message)
			}
			if !strings.Contains(message, tc.message) {
				t.Errorf("message\n %q\nwant it to contain\n %q", message, tc.message)
			}
			served := servedCRL(out)
			if want := string(pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: good})); tc.served && served != want {
				t.Errorf("CA secret's CRL = %q, want the fetched list", served)
			} else if !tc.served && served != "" {
				t.Errorf("CA secret serves a CRL %q, want none", served)
			}
			want := map[string][][]byte(nil)
			if tc.wantsURLs {
				want = map[string][][]byte{crlURL: {ca.cert.Raw}}
			}
			if !reflect.DeepEqual(out.CRLDistributionPoints, want) {
				t.Errorf("CRLDistributionPoints = %v, want %v", out.CRLDistributionPoints, want)
			}
		})
	}
}

// A fetched list arriving, changing or going stale reaches the policy
// through Update as through a whole translation.
func TestCRLDistributionPointsUpdate(t *testing.T) {
	ca := newDPCA(t, "dp ca")
	nn := types.NamespacedName{Namespace: "shop", Name: "pay-tls"}
	opts := translator.Options{CRLFetch: true}
	tr := translator.New()
	tr.Translate(crlCase(t, ca, "KeepLastGood"), nil, goldenNow, opts)
	steps := []*input.FetchedCRL{
		fetchedCRL(ca.list(t, 1), "", false),
		fetchedCRL(ca.list(t, 2), "", false),
		fetchedCRL(ca.list(t, 2), "timeout", false),
		nil, // the fetcher forgot it
	}
	for i, f := range steps {
		change := translator.Change{Kind: translator.KindFetchedCRL, Key: types.NamespacedName{Name: crlURL}}
		var fetched []*input.FetchedCRL
		if f != nil {
			change.Object, fetched = f, []*input.FetchedCRL{f}
		}
		got, ok := tr.Update([]translator.Change{change}, nil, goldenNow, opts)
		if !ok {
			t.Fatalf("step %d: Update refused a FetchedCRL change", i)
		}
		want := translator.Translate(crlCase(t, ca, "KeepLastGood", fetched...), nil, goldenNow, opts)
		if !reflect.DeepEqual(got.Statuses[nn].Ancestors[0].Conditions, want.Statuses[nn].Ancestors[0].Conditions) {
			t.Errorf("step %d: Update's conditions\n %+v\nTranslate's\n %+v", i, got.Statuses[nn].Ancestors[0].Conditions, want.Statuses[nn].Ancestors[0].Conditions)
		}
		if servedCRL(got) != servedCRL(want) {
			t.Errorf("step %d: Update serves CRL %q, Translate %q", i, servedCRL(got), servedCRL(want))
		}
		if !reflect.DeepEqual(got.CRLDistributionPoints, want.CRLDistributionPoints) {
			t.Errorf("step %d: CRLDistributionPoints %v, want %v", i, got.CRLDistributionPoints, want.CRLDistributionPoints)
		}
	}
}

// An XBackend takes the option as an annotation: it wants the CA's
// distribution point, serves the fetched list, and its status carries the
// condition; a fetched list changing reaches it through Update.
func TestXBackendCRLDistributionPoints(t *testing.T) {
	ca := newDPCA(t, "dp ca")
	nn := types.NamespacedName{Namespace: "shop", Name: "payments"}
	opts := translator.Options{CRLFetch: true}
	inputs := func(fetched ...*input.FetchedCRL) translator.Inputs {
		in := readCase(t, "xbackend-server-only")
		for i, cm := range in.ConfigMaps {
			cm = cm.DeepCopy()
			cm.Data = map[string]string{"ca.crt": ca.pem}
			in.ConfigMaps[i] = cm
		}
		x := in.XBackends[0].DeepCopy()
		x.Annotations = map[string]string{"tlsplane.io/crlDistributionPoints": "FailClosed"}
		in.XBackends[0] = x
		in.FetchedCRLs = fetched
		return in
	}
	fresh := func(out translator.Output) *metav1.Condition {
		t.Helper()
		st, ok := out.GatewayAPI.XBackends[nn]
		if !ok || len(st.Ancestors) == 0 {
			t.Fatalf("no status for XBackend %s", nn)
		}
		for i, c := range st.Ancestors[0].Conditions {
			if c.Type == "tlsplane.io/RevocationListsFresh" {
				return &st.Ancestors[0].Conditions[i]
			}
		}
		return nil
	}
	tr := translator.New()
	out := tr.Translate(inputs(), nil, goldenNow, opts)
	if c := fresh(out); c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "XBackend shop/payments: metadata.annotations tlsplane.io/crlDistributionPoints: the list at "+crlURL+" is not fetched yet") {
		t.Fatalf("before any fetch: %+v", c)
	}
	if !reflect.DeepEqual(out.CRLDistributionPoints, map[string][][]byte{crlURL: {ca.cert.Raw}}) {
		t.Fatalf("CRLDistributionPoints = %v, want the CA's point", out.CRLDistributionPoints)
	}
	f := fetchedCRL(ca.list(t, 1), "", false)
	out, ok := tr.Update([]translator.Change{{Kind: translator.KindFetchedCRL, Key: types.NamespacedName{Name: crlURL}, Object: f}}, nil, goldenNow, opts)
	if !ok {
		t.Fatal("Update refused a FetchedCRL change")
	}
	if c := fresh(out); c == nil || c.Status != metav1.ConditionTrue || c.Reason != "Fresh" {
		t.Fatalf("after the fetch: %+v", c)
	}
	if want := string(pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: f.DER})); servedCRL(out) != want {
		t.Fatalf("the XBackend's CA secret serves %q, want the fetched list", servedCRL(out))
	}
}

// A certificate's distribution points are alternatives for one list: one
// good list among them serves, whatever the others' errors.
func TestCRLDistributionPointsAlternatives(t *testing.T) {
	const ldap = "ldap:///CN=ca,CN=CDP,DC=example,DC=com?certificateRevocationList"
	ca := newDPCA(t, "dp ca", ldap)
	nn := types.NamespacedName{Namespace: "shop", Name: "pay-tls"}
	unreachable := &input.FetchedCRL{ObjectMeta: metav1.ObjectMeta{Name: ldap}, Error: "the scheme and host of " + ldap + " are not in --crl-fetch-allow", ErrorSince: goldenNow}
	out := translator.Translate(crlCase(t, ca, "FailClosed", fetchedCRL(ca.list(t, 1), "", false), unreachable), nil, goldenNow, translator.Options{CRLFetch: true})
	if c := policyCondition(out.Statuses[nn], "tlsplane.io/RevocationListsFresh"); c == nil || c.Reason != "Fresh" {
		t.Fatalf("one good list of two points: %+v, want Fresh", c)
	}
	if len(out.CRLDistributionPoints) != 2 {
		t.Errorf("CRLDistributionPoints = %v, want both points", out.CRLDistributionPoints)
	}
	out = translator.Translate(crlCase(t, ca, "FailClosed", unreachable), nil, goldenNow, translator.Options{CRLFetch: true})
	want := "the list at " + crlURL + " is not fetched yet; the list at " + ldap + " cannot be fetched since 2026-01-01T00:00:00Z: the scheme and host of " + ldap + " are not in --crl-fetch-allow"
	if c := policyCondition(out.Statuses[nn], "ResolvedRefs"); c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, want) {
		t.Fatalf("no good list at either point: ResolvedRefs %+v, want False naming both: %s", c, want)
	}
}

// A two-level PKI: the bundle holds the root and the issuing
// intermediate, whose distribution point names the root's list; the
// intermediate's own list, named only in the leaves it signs, is given by
// tlsplane.io/crlDistributionPointURLs. Both lists are wanted, verified
// and served.
func TestCRLDistributionPointURLs(t *testing.T) {
	const rootURL, issuingURL = "http://crl.example.com/root.crl", "http://crl.example.com/issuing.crl"
	root := newDPCA(t, "root")
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "issuing"},
		NotBefore: goldenNow.Add(-time.Hour), NotAfter: goldenNow.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		CRLDistributionPoints: []string{rootURL},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, root.cert, &key.PublicKey, root.key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	issuing := dpCA{cert: cert, key: key, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
	// The root's own DP (crlURL, from newDPCA) is a third list wanted.
	bundle := dpCA{cert: root.cert, key: root.key, pem: root.pem + issuing.pem}
	in := crlCase(t, bundle, "FailClosed",
		&input.FetchedCRL{ObjectMeta: metav1.ObjectMeta{Name: rootURL}, DER: root.list(t, 1)},
		&input.FetchedCRL{ObjectMeta: metav1.ObjectMeta{Name: crlURL}, DER: root.list(t, 1)},
		&input.FetchedCRL{ObjectMeta: metav1.ObjectMeta{Name: issuingURL}, DER: issuing.list(t, 1)})
	in.Policies[0].Spec.Options["tlsplane.io/crlDistributionPointURLs"] = issuingURL
	nn := types.NamespacedName{Namespace: "shop", Name: "pay-tls"}
	out := translator.Translate(in, nil, goldenNow, translator.Options{CRLFetch: true})
	if c := policyCondition(out.Statuses[nn], "tlsplane.io/RevocationListsFresh"); c == nil || c.Reason != "Fresh" {
		t.Fatalf("RevocationListsFresh = %+v, want Fresh", c)
	}
	var urls []string
	for u := range out.CRLDistributionPoints {
		urls = append(urls, u)
	}
	if len(urls) != 3 {
		t.Errorf("CRLDistributionPoints = %v, want the root's, the intermediate's and the option's URL", urls)
	}
	if served := servedCRL(out); strings.Count(served, "BEGIN X509 CRL") != 3 {
		t.Errorf("the CA secret serves %d lists, want the root's from its two points and the issuing CA's:\n%s", strings.Count(served, "BEGIN X509 CRL"), served)
	}
}
