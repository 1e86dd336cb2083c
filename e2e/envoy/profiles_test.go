package envoy

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// profileCase is one Service behind a policy with (or without) a crypto
// profile, and what its handshakes with a Go backend must negotiate.
type profileCase struct {
	name    string
	profile string // "" sets no option at all
	be      *curveBackend
	// want: the group, version and (when set) cipher of a handshake; an
	// empty curve means the handshake must fail.
	curve, version, cipher string
	// curveOneOf, when set, is the groups any of which the case accepts.
	curveOneOf []string
	// offered, when set, is the groups Envoy's hello must offer, in order.
	offered []string
	// notFIPS: Envoy 1.40 from PyPI is a BoringSSL build, not
	// BoringSSL-FIPS, so a fips-140-3 cluster must never reach it: the
	// policy says so instead (tlsplane's build check).
	notFIPS bool
}

func (c profileCase) svc() string { return "profile-" + c.name }

// path is what the case's requests ask for, so the backend's records of
// each case's connections can be told apart.
func (c profileCase) path() string { return "/" + c.name }

// TestCryptoProfilesNegotiate proves with a real Envoy 1.40 and Go
// crypto/tls backends (which report the negotiated group, version and
// cipher of each connection) what each tlsplane.io/profile negotiates:
// without any option Envoy's defaults choose the post-quantum hybrid
// X25519MLKEM768; post-quantum and modern choose it too; intermediate, the
// classical profile, chooses X25519; post-quantum, which offers only the
// hybrid, fails against a backend without it instead of falling back; and
// fips-140-3 is never sent to this Envoy, which is not a BoringSSL-FIPS
// build: the policy's DataPlaneAccepted says so, naming the fleet, the
// build and the profile. Each cluster carries its profile in Envoy's own
// config (metadata).
func TestCryptoProfilesNegotiate(t *testing.T) {
	e := newEnvIn(t, "GRPC", "profiles")
	ca := harness.NewAuthority(t, "tlsplane e2e profiles CA")
	leaf := issue(t, ca, e.pkiDir, "profiles", harness.LeafSpec{})
	hybrid := []tls.CurveID{tls.X25519MLKEM768, tls.X25519, tls.CurveP256, tls.CurveP384}
	pq := startCurveBackend(t, "pq", leaf, curveBackendOpts{curves: hybrid, maxTLS: tls.VersionTLS13})
	pq12 := startCurveBackend(t, "pq-tls12", leaf, curveBackendOpts{curves: hybrid, maxTLS: tls.VersionTLS12})
	classical := startCurveBackend(t, "classical", leaf, curveBackendOpts{curves: []tls.CurveID{tls.X25519, tls.CurveP256}, maxTLS: tls.VersionTLS13})

	cases := []profileCase{
		// Envoy 1.40's own default groups (what the README documents).
		{name: "none", be: pq, curve: "X25519MLKEM768", version: "TLS 1.3", offered: []string{"X25519MLKEM768", "X25519", "CurveP256"}},
		{name: "post-quantum", profile: "post-quantum", be: pq, curve: "X25519MLKEM768", version: "TLS 1.3", offered: []string{"X25519MLKEM768"}},
		{name: "modern", profile: "modern", be: pq, curve: "X25519MLKEM768", version: "TLS 1.3", offered: []string{"X25519MLKEM768", "X25519", "CurveP256"}},
		{name: "intermediate", profile: "intermediate", be: pq, curve: "X25519", version: "TLS 1.3", offered: []string{"X25519", "CurveP256", "CurveP384"}},
		{name: "fips", profile: "fips-140-3", be: pq, notFIPS: true},
		{name: "none-tls12", be: pq12, curve: "X25519", version: "TLS 1.2"},
		{name: "intermediate-tls12", profile: "intermediate", be: pq12, curve: "X25519", version: "TLS 1.2", cipher: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
		{name: "post-quantum-vs-classical", profile: "post-quantum", be: classical},
		{name: "none-vs-classical", be: classical, curve: "X25519", version: "TLS 1.3"},
	}
	objs := []object{caConfigMap("profiles-ca", ca.PEM)}
	for _, c := range cases {
		objs = append(objs, serviceWithEndpoints(c.svc(), svcPort{name: "https", port: svcPortNumber, backendPort: c.be.port})...)
		p := policy{name: c.svc(), targets: []target{{svc: c.svc()}}, caRefs: []caRef{{name: "profiles-ca"}}, hostname: hostAbc}
		if c.profile != "" {
			p.options = map[string]string{"profile": c.profile}
		}
		objs = append(objs, p.object())
	}
	writeManifests(t, e.manifestDir, "profiles", objs...)
	e.startTLSPlane(t)
	e.envoy = startEnvoy(t, e)

	var report []string
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cluster := clusterName(c.svc(), svcPortNumber)
			if c.notFIPS {
				refusedByBuild(t, e, c, cluster)
				report = append(report, fmt.Sprintf("%-26s %-13s not sent: this Envoy is not a BoringSSL-FIPS build", c.name, c.profile))
				return
			}
			v := e.waitCluster(t, cluster, activeTLS(hostAbc, c.be.port))
			if got := clusterProfile(t, v); got != c.profile {
				t.Errorf("Envoy's cluster %s carries profile %q, want %q", cluster, got, c.profile)
			}
			n, status := negotiate(t, e, cluster, c)
			// Every connection of the case, not only the last answer:
			// none fell back to another group on the way.
			for _, conn := range c.be.connections(c.path()) {
				if err := c.check(conn, http.StatusOK); err != nil && status == http.StatusOK {
					t.Errorf("%s: a connection %v", cluster, err)
				}
			}
			if status != http.StatusOK && !refusedForKeyExchange(c.be) {
				t.Errorf("%s: the backend refused no handshake for want of a shared group: %q", cluster, c.be.refusedHandshakes())
			}
			report = append(report, fmt.Sprintf("%-26s %-13s backend %-10s -> %s", c.name, orNone(c.profile), c.be.name, handshakeOutcome(n, status)))
			if c.name == "none" || c.name == "none-tls12" {
				report = append(report, fmt.Sprintf("%-26s Envoy offered groups %s; suites %s", "", strings.Join(n.Offered.Curves, ", "), strings.Join(n.Offered.Ciphers, ", ")))
			}
		})
	}
	t.Logf("what Envoy 1.40 negotiated with the Go backends:\n%s", strings.Join(report, "\n"))
}

// refusedByBuild: the case's policy is DataPlaneAccepted=False
// EnvoyBuildRefuses, naming the fleet, the build and the profile, and
// Envoy never holds its cluster.
func refusedByBuild(t *testing.T, e *env, c profileCase, cluster string) {
	t.Helper()
	var last *condition
	err := harness.Eventually(applyTimeout, 200*time.Millisecond, func() error {
		cond, err := policyConditionOf(e, c.svc(), "tlsplane.io/DataPlaneAccepted")
		if err != nil {
			return err
		}
		last = cond
		if cond == nil || cond.Status != "False" || cond.Reason != "EnvoyBuildRefuses" {
			return fmt.Errorf("DataPlaneAccepted %+v, want False EnvoyBuildRefuses", cond)
		}
		for _, want := range []string{"fleet " + envoyNodeFleet + ":", "Envoy 1.40", "BoringSSL", `profile "fips-140-3"`, cluster} {
			if !strings.Contains(cond.Message, want) {
				return fmt.Errorf("DataPlaneAccepted message %q lacks %q", cond.Message, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("policy %s: %v (last %+v)\n--- tlsplane log:\n%s", c.svc(), err, last, e.tlsplane.LogTail(15))
	}
	if v, err := e.envoy.cluster(cluster); err == nil && (v.active || v.warming) {
		t.Errorf("Envoy holds cluster %s (%s), whose profile fips-140-3 its build cannot honour", cluster, v)
	}
	if r, err := e.tryRequest(cluster, c.path()); err == nil && r.Status == http.StatusOK {
		t.Errorf("%s answered 200 through Envoy: it must not be served to a non-FIPS build", cluster)
	}
}

// negotiate sends requests until one gives what the case wants (Envoy may
// still hold the cluster of an earlier version for a moment), and fails
// the test with the last outcome otherwise.
func negotiate(t *testing.T, e *env, cluster string, c profileCase) (negotiatedKeyExchange, int) {
	t.Helper()
	var n negotiatedKeyExchange
	var status int
	err := harness.Eventually(applyTimeout, 200*time.Millisecond, func() error {
		r, err := e.tryRequest(cluster, c.path())
		if err != nil {
			return err
		}
		n, status = negotiatedKeyExchange{}, r.Status
		if r.Status == http.StatusOK {
			if err := json.Unmarshal([]byte(r.Body), &n); err != nil {
				return fmt.Errorf("200 without the backend's answer: %q", r.Body)
			}
		}
		return c.check(n, status)
	})
	if err != nil {
		t.Fatalf("%s: %v", cluster, err)
	}
	return n, status
}

// check compares one answer with what the case wants.
func (c profileCase) check(n negotiatedKeyExchange, status int) error {
	if c.curve == "" && c.curveOneOf == nil {
		if status == http.StatusOK {
			return fmt.Errorf("the handshake succeeded (%s), want it refused: the profile must not fall back", n)
		}
		return nil
	}
	switch {
	case status != http.StatusOK:
		return fmt.Errorf("status %d, want a handshake with %s", status, c.want())
	case c.offered != nil && !slices.Equal(n.Offered.Curves, c.offered):
		return fmt.Errorf("Envoy offered the groups %v, want %v", n.Offered.Curves, c.offered)
	case c.curve != "" && n.Curve != c.curve,
		c.curveOneOf != nil && !slices.Contains(c.curveOneOf, n.Curve),
		n.TLSVersion != c.version,
		c.cipher != "" && n.Cipher != c.cipher:
		return fmt.Errorf("negotiated %s, want %s", n, c.want())
	}
	return nil
}

func (c profileCase) want() string {
	curve := c.curve
	if curve == "" {
		curve = strings.Join(c.curveOneOf, " or ")
	}
	return strings.Join(strings.Fields(c.version+" "+c.cipher+" "+curve), " ")
}

func orNone(profile string) string {
	if profile == "" {
		return "(no option)"
	}
	return profile
}

// refusedForKeyExchange: the backend logged a handshake refused because
// Envoy offered no group it accepts (Go's message).
func refusedForKeyExchange(be *curveBackend) bool {
	for _, line := range be.refusedHandshakes() {
		if strings.Contains(line, "no key exchanges supported by both client and server") {
			return true
		}
	}
	return false
}

func handshakeOutcome(n negotiatedKeyExchange, status int) string {
	if status != http.StatusOK {
		return fmt.Sprintf("handshake refused (status %d)", status)
	}
	return n.String()
}

// clusterProfile is filter_metadata["tlsplane.io"].profile of the cluster
// as Envoy's config_dump shows it, "" when absent.
func clusterProfile(t *testing.T, v clusterView) string {
	t.Helper()
	var c struct {
		Metadata struct {
			FilterMetadata map[string]map[string]any `json:"filter_metadata"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(v.raw), &c); err != nil {
		t.Fatalf("cluster in config_dump: %v", err)
	}
	s, _ := c.Metadata.FilterMetadata["tlsplane.io"]["profile"].(string)
	return s
}

// xbProfiles: an XBackend takes tlsplane.io/profile as an annotation, as
// it takes every option: through the Gateway, its post-quantum profile
// negotiates X25519MLKEM768 with the Go backend and its intermediate
// profile X25519, on every connection.
func xbProfiles(t *testing.T, w *xbWorld) {
	for _, c := range []struct{ xbackend, curve string }{
		{"post-quantum", "X25519MLKEM768"},
		{"intermediate", "X25519"},
	} {
		var n negotiatedKeyExchange
		w.await(t, c.xbackend, w.get(c.xbackend), func(r response) error {
			if r.Status != http.StatusOK {
				return fmt.Errorf("status %d", r.Status)
			}
			n = negotiatedKeyExchange{}
			if err := json.Unmarshal([]byte(r.Body), &n); err != nil || n.Name != w.curves.name {
				return fmt.Errorf("not the Go backend's answer: %q", r.Body)
			}
			if n.Curve != c.curve || n.TLSVersion != "TLS 1.3" {
				return fmt.Errorf("negotiated %s, want TLS 1.3 %s", n, c.curve)
			}
			return nil
		})
		for _, conn := range w.curves.connections("/" + c.xbackend) {
			if conn.Curve != c.curve {
				t.Errorf("XBackend %s: a connection negotiated %s, want %s", c.xbackend, conn, c.curve)
			}
		}
		t.Logf("XBackend %s (annotation tlsplane.io/profile): %s", c.xbackend, n)
	}
}
