package envoy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

const crlFetchSvc = "crl-fetch"

// crlRefresh is tlsplane's --crl-refresh-interval in this test; a list
// changed at the server must reach Envoy within it, plus a debounce and an
// SDS push.
const crlRefresh = 2 * time.Second

// crlServer serves one revocation list, PEM, on 127.0.0.1, and counts
// requests.
type crlServer struct {
	*httptest.Server
	mu     sync.Mutex
	list   []byte
	status int // 0: 200 with the list
	hits   int
}

func (s *crlServer) serve(list []byte) { s.mu.Lock(); s.list, s.status = list, 0; s.mu.Unlock() }

func (s *crlServer) fail(status int) { s.mu.Lock(); s.status = status; s.mu.Unlock() }

// TestCRLDistributionPoints proves tlsplane.io/crlDistributionPoints with
// a real Envoy and a real HTTP server publishing the CA's list at the URL
// of the CA certificate's CRL distribution point: tlsplane fetches it and
// serves it in the CA's SDS secret; a list signed by another key (with the
// CA's very name) is refused, shown in /debug/status and the policy's
// condition, and the last good one stays served; a list revoking the
// backend's certificate makes Envoy refuse the backend within one refresh
// interval, and a list revoking nothing lets it back. A policy that fails
// closed is Invalid, and its backend refused, once the distribution point
// stops answering.
func TestCRLDistributionPoints(t *testing.T) {
	e := newEnvIn(t, "GRPC", "crl-fetch")
	srv := &crlServer{}
	srv.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		srv.hits++
		if srv.status != 0 {
			w.WriteHeader(srv.status)
			return
		}
		w.Header().Set("Content-Type", "application/x-pem-file")
		_, _ = w.Write(srv.list)
	}))
	defer srv.Close()
	crlURL := srv.URL + "/ca.crl"
	const caName = "tlsplane e2e CRL distribution point CA"
	ca := harness.NewAuthorityWithCRL(t, caName, crlURL)
	impostor := harness.NewAuthority(t, caName) // the same subject, another key
	leaf := issue(t, ca, e.pkiDir, "crl-fetch", harness.LeafSpec{})
	be := startBackend(t, e, crlFetchSvc, backendOpts{leaf: leaf})
	srv.serve(ca.CRL(t, time.Now().Add(24*time.Hour)))

	pol := policy{name: crlFetchSvc, targets: []target{{svc: crlFetchSvc}}, caRefs: []caRef{{name: "ca-" + crlFetchSvc}}, hostname: hostAbc,
		options: map[string]string{"crlDistributionPoints": "KeepLastGood"}}
	objs := serviceWithEndpoints(crlFetchSvc, svcPort{name: "https", port: svcPortNumber, backendPort: be.port})
	writeManifests(t, e.manifestDir, crlFetchSvc, append(objs, caConfigMap("ca-"+crlFetchSvc, ca.PEM), pol.object())...)
	e.serveArgs = []string{"--crl-fetch-allow", srv.URL, "--crl-refresh-interval", crlRefresh.String()}
	e.startTLSPlane(t)
	e.envoy = &envoyProxy{harness.StartEnvoy(t, harness.EnvoyOptions{
		Bin: e.envoyBin, LogDir: e.logDir, APIType: e.apiType,
		NodeID: envoyNodeID, Fleet: envoyNodeFleet, XDSAddress: "127.0.0.1:" + strconv.Itoa(e.xdsPort), WaitReady: true,
	})}
	cluster := clusterName(crlFetchSvc, svcPortNumber)
	view := e.waitCluster(t, cluster, activeTLS(hostAbc, be.port))
	if !strings.Contains(view.caSecret, "+crl/distribution-points") {
		t.Fatalf("cluster %s's validation secret is %q, want the CA with the fetched lists", cluster, view.caSecret)
	}
	awaitFreshness(t, e, "True", "Fresh", crlURL)
	if r := e.request(t, cluster, "/before-revocation"); r.Status != 200 {
		t.Fatalf("with a list revoking nothing: want 200, got %s", r)
	}

	// A list of the impostor revoking the backend: refused, the last good
	// list stays, and the condition and /debug/status say why.
	srv.serve(impostor.CRL(t, time.Now().Add(24*time.Hour), leaf))
	c := awaitFreshness(t, e, "False", "Stale", "is not signed by a CA certificate naming this distribution point")
	t.Logf("a list signed by another key: %s %s: %s", c.Status, c.Reason, c.Message)
	if point, err := fetchedCRL(e, crlURL); err != nil || !strings.Contains(point.Error, "is not signed by") {
		t.Fatalf("/debug/status fetchedCRLs for %s: %+v (%v), want the signature error", crlURL, point, err)
	}
	for i := range 3 {
		if r := e.request(t, cluster, "/impostor-list"); r.Status != 200 {
			t.Fatalf("request %d after the impostor's list: want 200 (its revocation is not served), got %s", i, r)
		}
	}

	// The CA revokes the backend's certificate: refused within a refresh.
	srv.serve(ca.CRL(t, time.Now().Add(24*time.Hour), leaf))
	revoked := time.Now()
	var last response
	err := harness.Eventually(crlRefresh+applyTimeout/2, 100*time.Millisecond, func() error {
		r, err := e.tryRequest(cluster, "/after-revocation")
		if err != nil {
			return err
		}
		last = r
		if r.Status < 500 {
			return fmt.Errorf("got %s", r)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the revoked backend is still accepted: %v\n--- tlsplane log:\n%s", err, e.tlsplane.LogTail(15))
	}
	took := time.Since(revoked)
	t.Logf("the revocation published at the distribution point was enforced by Envoy after %s (refresh interval %s): %s", took.Round(10*time.Millisecond), crlRefresh, last)
	if took > crlRefresh+5*time.Second {
		t.Errorf("the revocation took %s, more than the refresh interval %s and 5s for debounce and SDS", took, crlRefresh)
	}
	awaitFreshness(t, e, "True", "Fresh", crlURL)
	metrics, err := harness.HTTPGet(e.tlsplaneURL("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	srv.serve(ca.CRL(t, time.Now().Add(24*time.Hour)))
	awaitRequest(t, e, cluster, "a list revoking nothing again", func(status int) bool { return status == 200 })

	pol.options["crlDistributionPoints"] = "FailClosed"
	writeManifests(t, e.manifestDir, crlFetchSvc, append(objs, caConfigMap("ca-"+crlFetchSvc, ca.PEM), pol.object())...)
	srv.fail(http.StatusServiceUnavailable)
	c = awaitFreshness(t, e, "False", "Stale", "HTTP status 503 Service Unavailable")
	resolved, err := policyConditionOf(e, crlFetchSvc, "ResolvedRefs")
	if err != nil || resolved == nil || resolved.Status != "False" || resolved.Reason != "CRLDistributionPointUnavailable" || !strings.Contains(resolved.Message, crlURL) {
		t.Fatalf("FailClosed with the distribution point answering 503: ResolvedRefs %+v (%v), want False CRLDistributionPointUnavailable naming %s", resolved, err, crlURL)
	}
	t.Logf("FailClosed, the point answering 503: ResolvedRefs %s %s: %s", resolved.Status, resolved.Reason, resolved.Message)
	awaitRequest(t, e, cluster, "FailClosed with a stale list", func(status int) bool { return status >= 500 })

	for _, series := range []string{`tlsplane_crl_age_seconds{url="` + crlURL + `"}`, `tlsplane_crl_fetches_total{outcome="wrong_signer"}`, `tlsplane_crl_fetches_total{outcome="ok"}`} {
		if !strings.Contains(string(metrics), series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
}

// awaitFreshness waits for the policy's tlsplane.io/RevocationListsFresh
// condition to have status and reason, with a message containing want.
func awaitFreshness(t *testing.T, e *env, status, reason, want string) *condition {
	t.Helper()
	var last *condition
	err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		c, err := policyConditionOf(e, crlFetchSvc, "tlsplane.io/RevocationListsFresh")
		if err != nil {
			return err
		}
		last = c
		if c == nil || c.Status != status || c.Reason != reason || !strings.Contains(c.Message, want) {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("RevocationListsFresh never became %s %s naming %q: %v\n--- tlsplane log:\n%s", status, reason, want, err, e.tlsplane.LogTail(15))
	}
	return last
}

// policyConditionOf reads condition typ of policy ns/name from
// /debug/status; nil when absent.
func policyConditionOf(e *env, name, typ string) (*condition, error) {
	body, err := harness.HTTPGet(e.tlsplaneURL("/debug/status"))
	if err != nil {
		return nil, err
	}
	var doc struct {
		Policies []struct {
			Namespace, Name string
			Status          struct {
				Ancestors []struct{ Conditions []condition }
			}
		}
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("/debug/status: %w", err)
	}
	for _, p := range doc.Policies {
		if p.Namespace == ns && p.Name == name {
			for _, a := range p.Status.Ancestors {
				for _, c := range a.Conditions {
					if c.Type == typ {
						return &c, nil
					}
				}
			}
			return nil, nil
		}
	}
	return nil, fmt.Errorf("/debug/status has no policy %s/%s", ns, name)
}

// fetchedPoint is one entry of /debug/status's fetchedCRLs.
type fetchedPoint struct {
	URL, Error string
	FetchedAt  *time.Time
}

func fetchedCRL(e *env, url string) (*fetchedPoint, error) {
	body, err := harness.HTTPGet(e.tlsplaneURL("/debug/status"))
	if err != nil {
		return nil, err
	}
	var doc struct{ FetchedCRLs []fetchedPoint }
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("/debug/status: %w", err)
	}
	for _, p := range doc.FetchedCRLs {
		if p.URL == url {
			return &p, nil
		}
	}
	return nil, fmt.Errorf("/debug/status fetchedCRLs has no %s", url)
}

// awaitRequest waits until a request through cluster answers a status ok
// accepts.
func awaitRequest(t *testing.T, e *env, cluster, what string, ok func(int) bool) {
	t.Helper()
	var last response
	err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		r, err := e.tryRequest(cluster, "/"+strings.ReplaceAll(what, " ", "-"))
		if err != nil {
			return err
		}
		last = r
		if !ok(r.Status) {
			return fmt.Errorf("got %s", r)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v (last: %s)\n--- tlsplane log:\n%s", what, err, last, e.tlsplane.LogTail(15))
	}
}
