package backendcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
)

// An XBackend's clusters feed its own condition, on our parent entries
// only, and never a policy of the same name.
func TestXBackendConditionFollowsItsClusters(t *testing.T) {
	c := &clock{now: t0}
	var flips atomic.Int32
	inv := newInventory(c, &flips, nil, 0)
	const cluster = "XBackend/shop/pay/443"
	backs := map[string][]types.NamespacedName{cluster: {pay}}
	xbackends := map[types.NamespacedName]gwxv1a1.BackendStatus{pay: {Ancestors: []gwxv1a1.BackendAncestorStatus{
		{ControllerName: translator.DefaultControllerName, AncestorRef: gwv1.ParentReference{Name: "web"},
			Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: 3}}},
		{ControllerName: "example.com/other", AncestorRef: gwv1.ParentReference{Name: "theirs"}},
	}}}
	s := sighting("10.0.0.7:8443", -time.Hour, "TLSv1.3")
	s.Cluster = cluster
	inv.Record(s)

	out := inv.ApplyXBackends(xbackends, backs, nil, "", c.now)
	if len(xbackends[pay].Ancestors[0].Conditions) != 1 {
		t.Fatal("ApplyXBackends changed its input")
	}
	i := slices.IndexFunc(out[pay].Ancestors[0].Conditions, func(x metav1.Condition) bool { return x.Type == ConditionBackendCertificatesValid })
	if i < 0 {
		t.Fatalf("XBackend shop/pay: no condition in %+v", out[pay].Ancestors[0].Conditions)
	}
	cond := out[pay].Ancestors[0].Conditions[i]
	if cond.Status != metav1.ConditionFalse || cond.Reason != ReasonExpired || cond.ObservedGeneration != 3 || !strings.Contains(cond.Message, "of cluster "+cluster) {
		t.Fatalf("XBackend shop/pay with an expired backend: %+v", cond)
	}
	if n := len(out[pay].Ancestors[1].Conditions); n != 0 {
		t.Fatalf("another controller's parent got %d conditions", n)
	}
	if got := certCondition(t, inv, pay, nil, c.now); got != nil {
		t.Fatalf("the policy shop/pay got the XBackend's condition: %+v", got)
	}
	if d := inv.Debug(); len(d) != 1 || len(d[0].XBackends) != 1 || d[0].XBackends[0] != pay || len(d[0].Policies) != 0 || d[0].State != ReasonExpired {
		t.Fatalf("debug %+v, want the XBackend's cluster naming it", d)
	}
}

// CertificateOf keeps what the condition and the inventory show, bounded.
func TestCertificateOf(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("spiffe://shop/pay")
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(0x0abc), Subject: pkix.Name{CommonName: "pay.shop", Organization: []string{"Shop"}},
		NotBefore: t0, NotAfter: t0.Add(time.Hour), URIs: []*url.URL{u}, IPAddresses: []net.IP{net.ParseIP("10.0.0.7")},
		DNSNames: []string{strings.Repeat("a", 300)},
	}
	for i := range 20 {
		tmpl.DNSNames = append(tmpl.DNSNames, "n"+string(rune('a'+i))+".shop")
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	got := CertificateOf(leaf)
	if got.Subject != "CN=pay.shop,O=Shop" || got.Issuer != got.Subject || got.Serial != "abc" || !got.NotAfter.Equal(t0.Add(time.Hour)) {
		t.Fatalf("certificate %+v", got)
	}
	if len(got.SANs) != maxSANs || len(got.SANs[0]) != maxField || got.SANs[1] != "DNS:na.shop" {
		t.Fatalf("SANs %d, first %d bytes, second %q: want %d, cut to %d", len(got.SANs), len(got.SANs[0]), got.SANs[1], maxSANs, maxField)
	}
}
