package crlfetch

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T, name string) testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: t0.Add(-time.Hour), NotAfter: t0.Add(100 * 24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return testCA{cert, key}
}

// list is a CRL valid from thisUpdate for validity.
func (ca testCA) list(t *testing.T, number int64, thisUpdate time.Time, validity time.Duration) []byte {
	t.Helper()
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(number),
		ThisUpdate: thisUpdate, NextUpdate: thisUpdate.Add(validity)}, ca.cert, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// crlServer serves body at /ca.crl and counts requests.
type crlServer struct {
	*httptest.Server
	mu   sync.Mutex
	body []byte
	hits atomic.Int32
}

func newCRLServer(t *testing.T, body []byte) *crlServer {
	s := &crlServer{body: body}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		_, _ = w.Write(s.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *crlServer) serve(body []byte) { s.mu.Lock(); s.body = body; s.mu.Unlock() }

// clock is a settable fake clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) set(t time.Time)         { c.mu.Lock(); c.now = t; c.mu.Unlock() }
func (c *clock) advance(d time.Duration) { c.set(c.Now().Add(d)) }

func newTestFetcher(t *testing.T, allow string, c *clock, cfg Config) *Fetcher {
	t.Helper()
	allowed, err := ParseAllowed(allow)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Allowed, cfg.Now = allowed, c.Now
	return New(cfg, nil)
}

func only(t *testing.T, f *Fetcher) (der []byte, errText string) {
	t.Helper()
	lists := f.Lists()
	if len(lists) != 1 {
		t.Fatalf("%d lists, want 1: %+v", len(lists), lists)
	}
	return lists[0].DER, lists[0].Error
}

func TestParseAllowed(t *testing.T) {
	a, err := ParseAllowed(" http://CRL.example.com, https://pki.internal:8443,")
	if err != nil {
		t.Fatal(err)
	}
	for u, want := range map[string]bool{
		"http://crl.example.com/ca.crl": true, "http://crl.example.com:80/x": true, "https://crl.example.com/x": false,
		"http://crl.example.com:8080/x": false, "https://pki.internal:8443/a": true, "https://pki.internal/a": false,
		"http://user@crl.example.com/x": false, "http://crl.example.com.evil/x": false,
	} {
		parsed, _ := parseURL(u)
		if got := a.Allows(parsed); got != want {
			t.Errorf("Allows(%s) = %v, want %v", u, got, want)
		}
	}
	for _, bad := range []string{"crl.example.com", "ftp://crl.example.com", "http://crl.example.com/path", "http://u@h"} {
		if _, err := ParseAllowed(bad); err == nil || !strings.Contains(err.Error(), "--crl-fetch-allow") {
			t.Errorf("ParseAllowed(%q) = %v, want an error naming the flag", bad, err)
		}
	}
}

// A good list, DER or PEM, is kept and reported as a change; a list signed
// by another key is refused and the last good one stays.
func TestFetchVerifies(t *testing.T) {
	ca, other := newTestCA(t, "ca"), newTestCA(t, "ca") // the same name, another key
	good := ca.list(t, 1, t0, 24*time.Hour)
	srv := newCRLServer(t, pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: good}))
	c := &clock{now: t0}
	f := newTestFetcher(t, srv.URL, c, Config{})
	u := srv.URL + "/ca.crl"
	f.Want(map[string][][]byte{u: {ca.cert.Raw}})
	f.Step(context.Background())
	if der, e := only(t, f); string(der) != string(good) || e != "" {
		t.Fatalf("after a good PEM list: DER kept %v, error %q", der != nil, e)
	}
	if ch := f.Changes(); len(ch) != 1 || ch[0].Key.Name != u || ch[0].Object == nil {
		t.Fatalf("Changes = %+v, want the list", ch)
	}
	c.advance(2 * time.Hour)
	f.Step(context.Background())
	if n, ch := srv.hits.Load(), f.Changes(); n != 2 || len(ch) != 0 {
		t.Fatalf("the same list fetched again (%d requests): Changes = %+v, want none", n, ch)
	}
	srv.serve(other.list(t, 2, t0.Add(time.Minute), 24*time.Hour))
	c.advance(2 * time.Hour)
	f.Step(context.Background())
	der, e := only(t, f)
	if string(der) != string(good) || !strings.Contains(e, `the list (issuer "CN=ca") is not signed by a CA certificate naming this distribution point`) {
		t.Fatalf("after a list of another key: last good kept %v, error %q", string(der) == string(good), e)
	}
	srv.serve(ca.list(t, 3, t0.Add(-48*time.Hour), 24*time.Hour)) // expired when served
	c.advance(time.Minute)
	f.Step(context.Background())
	if der, e := only(t, f); string(der) != string(good) || !strings.Contains(e, "the list's nextUpdate 2025-12-31T00:00:00Z has passed") {
		t.Fatalf("after an expired list: last good kept %v, error %q", string(der) == string(good), e)
	}
	srv.serve(ca.list(t, 0, t0.Add(-time.Hour), 24*time.Hour)) // replayed, older
	c.advance(time.Minute)
	f.Step(context.Background())
	if der, e := only(t, f); string(der) != string(good) || !strings.Contains(e, "older than the last good list") {
		t.Fatalf("after an older list: last good kept %v, error %q", string(der) == string(good), e)
	}
}

// Nothing is requested from a host not allowed, nor after a redirect to
// one, nor past 3 redirects; bodies over the limit and slow servers fail.
func TestFetchBounds(t *testing.T) {
	ca := newTestCA(t, "ca")
	good := ca.list(t, 1, t0, 24*time.Hour)
	target := newCRLServer(t, good)
	hops := 0
	var redirector *httptest.Server
	redirector = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/elsewhere":
			http.Redirect(w, r, target.URL+"/ca.crl", http.StatusFound)
		case "/loop":
			hops++
			http.Redirect(w, r, redirector.URL+"/loop", http.StatusFound)
		case "/big":
			_, _ = w.Write(make([]byte, 2048))
		case "/slow":
			time.Sleep(500 * time.Millisecond)
		case "/missing":
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(redirector.Close)
	cases := []struct {
		path, allow, want string
	}{
		{"/ca.crl", "http://crl.example.com", "are not in --crl-fetch-allow"},
		{"/elsewhere", redirector.URL, "whose scheme and host are not in --crl-fetch-allow"},
		{"/loop", redirector.URL, "more than 3 redirects"},
		{"/big", redirector.URL, "larger than the 1024 bytes --crl-fetch-max-bytes allows"},
		{"/slow", redirector.URL, "no answer within the 200ms --crl-fetch-timeout allows"},
		{"/missing", redirector.URL, "HTTP status 404"},
	}
	for _, tc := range cases {
		target.hits.Store(0)
		hops = 0
		c := &clock{now: t0}
		f := newTestFetcher(t, tc.allow, c, Config{MaxBytes: 1024, Timeout: 200 * time.Millisecond})
		base := redirector.URL
		if tc.path == "/ca.crl" {
			base = target.URL
		}
		f.Want(map[string][][]byte{base + tc.path: {ca.cert.Raw}})
		f.Step(context.Background())
		if der, e := only(t, f); der != nil || !strings.Contains(e, tc.want) {
			t.Errorf("%s: DER %v, error %q, want one containing %q", tc.path, der != nil, e, tc.want)
		}
		if n := target.hits.Load(); n != 0 {
			t.Errorf("%s: the disallowed server got %d requests", tc.path, n)
		}
		if tc.path == "/loop" && hops != MaxRedirects+1 {
			t.Errorf("/loop: %d requests, want %d (the first and 3 redirects)", hops, MaxRedirects+1)
		}
	}
}

// A list is refreshed a tenth of its validity before nextUpdate or after
// the refresh interval, whichever is first; failures are retried with
// backoff, keep the last good list with the error, and a list past its
// nextUpdate is marked expired. A URL no longer wanted is forgotten and
// never fetched again.
func TestRefreshTiming(t *testing.T) {
	ca := newTestCA(t, "ca")
	srv := newCRLServer(t, ca.list(t, 1, t0, 10*time.Hour))
	c := &clock{now: t0}
	f := newTestFetcher(t, srv.URL, c, Config{RefreshInterval: 4 * time.Hour})
	u := srv.URL + "/ca.crl"
	f.Want(map[string][][]byte{u: {ca.cert.Raw}})
	step := func(at time.Duration, wantHits int32) time.Time {
		t.Helper()
		c.set(t0.Add(at))
		next, _ := f.Step(context.Background())
		if n := srv.hits.Load(); n != wantHits {
			t.Fatalf("at %v: %d requests, want %d", at, n, wantHits)
		}
		return next
	}
	if next := step(0, 1); !next.Equal(t0.Add(4 * time.Hour)) {
		t.Fatalf("next refresh %v, want the interval (4h) before nextUpdate-10%% (9h)", next)
	}
	step(4*time.Hour-time.Second, 1)
	srv.serve(ca.list(t, 2, t0.Add(4*time.Hour), 3*time.Hour))
	if next := step(4*time.Hour, 2); !next.Equal(t0.Add(6*time.Hour + 42*time.Minute)) {
		t.Fatalf("next refresh %v, want nextUpdate (7h) less a tenth of 3h, before the interval (8h)", next)
	}
	srv.serve([]byte("garbage"))
	next := step(6*time.Hour+42*time.Minute, 3)
	if !next.Equal(t0.Add(6*time.Hour + 42*time.Minute + 10*time.Second)) {
		t.Fatalf("first retry at %v, want 10s later", next)
	}
	if der, e := only(t, f); der == nil || !strings.Contains(e, "not a CRL") {
		t.Fatalf("after a failed refresh: last good kept %v, error %q", der != nil, e)
	}
	f.Changes()
	if next := step(6*time.Hour+42*time.Minute+10*time.Second, 4); !next.Equal(t0.Add(6*time.Hour + 42*time.Minute + 30*time.Second)) {
		t.Fatalf("second retry at %v, want 20s after the first", next)
	}
	if ch := f.Changes(); len(ch) != 0 {
		t.Fatalf("the same error again reported as a change: %+v", ch)
	}
	c.set(t0.Add(7 * time.Hour))
	f.Step(context.Background())
	if l := f.Lists()[0]; !l.Expired || l.DER == nil {
		t.Fatalf("past nextUpdate: expired %v, DER kept %v", l.Expired, l.DER != nil)
	}
	f.Want(nil)
	if ch := f.Changes(); len(ch) != 1 || ch[0].Object != nil {
		t.Fatalf("an unwanted URL's Changes = %+v, want its deletion", ch)
	}
	hits := srv.hits.Load()
	c.set(t0.Add(48 * time.Hour))
	if _, wanted := f.Step(context.Background()); wanted || srv.hits.Load() != hits || len(f.Lists()) != 0 {
		t.Fatalf("an unwanted URL was fetched again or kept")
	}
}

// Fetches are counted by outcome.
func TestOutcomes(t *testing.T) {
	if got := outcomeOf(nil); got != outcomeOK {
		t.Errorf("a fetch without error counts as %q", got)
	}
	if got := outcomeOf(failed(outcomeWrongSigner, "x")); got != outcomeWrongSigner {
		t.Errorf("a wrong signer counts as %q", got)
	}
}
