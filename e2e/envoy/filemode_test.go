package envoy

import (
	"crypto/elliptic"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// pki is every certificate the scenarios use.
type pki struct {
	ca, otherCA                               *harness.Authority
	main, expired, selfSigned, p384, sentinel *harness.Leaf
	tls12, rotating, overlap                  *harness.Leaf
	// Mutual TLS: the CA the mtls backend trusts for client certificates,
	// the main leaf of that backend, Envoy's client certificate, one from
	// a CA the backend does not trust, and the test's own.
	clientCA                    *harness.Authority
	mtls, envoyClient, stranger *harness.Leaf
	probeClient                 *harness.Leaf
	// revoked is a server leaf of ca that the scenarios' CRLs revoke.
	revoked *harness.Leaf
}

func newPKI(t *testing.T, dir string) *pki {
	ca := harness.NewAuthority(t, "tlsplane e2e CA")
	p := &pki{ca: ca, otherCA: harness.NewAuthority(t, "unrelated CA")}
	p.main = issue(t, ca, dir, "main", harness.LeafSpec{})
	p.tls12 = issue(t, ca, dir, "tls12", harness.LeafSpec{})
	p.expired = issue(t, ca, dir, "expired", harness.LeafSpec{NotAfter: time.Now().Add(-2 * time.Hour)})
	p.selfSigned = issue(t, nil, dir, "self-signed", harness.LeafSpec{})
	p.p384 = issue(t, ca, dir, "p384", harness.LeafSpec{Curve: elliptic.P384()})
	p.sentinel = issue(t, ca, dir, "sentinel", harness.LeafSpec{})
	p.rotating = issue(t, ca, dir, "rotating", harness.LeafSpec{})
	p.overlap = issue(t, ca, dir, "overlap", harness.LeafSpec{})
	p.clientCA = harness.NewAuthority(t, "tlsplane e2e client CA")
	p.mtls = issue(t, ca, dir, "mtls", harness.LeafSpec{})
	p.envoyClient = p.clientCA.Issue(t, harness.LeafSpec{CommonName: "envoy-client", Client: true})
	p.stranger = p.otherCA.Issue(t, harness.LeafSpec{CommonName: "stranger", Client: true})
	p.probeClient = p.clientCA.Issue(t, harness.LeafSpec{CommonName: "e2e-probe", Client: true})
	p.revoked = issue(t, ca, dir, "revoked", harness.LeafSpec{})
	return p
}

// backends are the echo servers, one per kind of TLS listener.
type backends struct {
	main, tls12, expired, selfSigned, p384, plain, sentinel, rotating, overlap *backend
	// mtls requires a client certificate p.clientCA signed.
	mtls *backend
	// revoked serves p.revoked.
	revoked *backend
}

func startBackends(t *testing.T, e *env, p *pki) *backends {
	return &backends{
		main:       startBackend(t, e, "main", backendOpts{leaf: p.main}),
		tls12:      startBackend(t, e, "tls12", backendOpts{leaf: p.tls12, maxTLS: "1.2"}),
		expired:    startBackend(t, e, "expired", backendOpts{leaf: p.expired}),
		selfSigned: startBackend(t, e, "self-signed", backendOpts{leaf: p.selfSigned}),
		p384:       startBackend(t, e, "p384", backendOpts{leaf: p.p384, curves: "P-384"}),
		plain:      startBackend(t, e, "plain", backendOpts{plain: true}),
		// sentinel is where only fail-closed scenarios send: it must stay at zero.
		sentinel: startBackend(t, e, "sentinel", backendOpts{leaf: p.sentinel}),
		rotating: startBackend(t, e, "rotating", backendOpts{leaf: p.rotating}),
		overlap:  startBackend(t, e, "overlap", backendOpts{leaf: p.overlap}),
		mtls:     startBackend(t, e, "mtls", backendOpts{leaf: p.mtls, clientCA: p.clientCA, probe: p.probeClient}),
		revoked:  startBackend(t, e, "revoked", backendOpts{leaf: p.revoked}),
	}
}

// TestFileMode runs every scenario against one `tlsplane serve --dir` and
// one Envoy, editing the directory between scenarios: once with Envoy on
// state-of-the-world ADS, once on incremental (delta) ADS.
func TestFileMode(t *testing.T) {
	for _, apiType := range []string{"GRPC", "DELTA_GRPC"} {
		t.Run(apiType, func(t *testing.T) { fileMode(t, apiType) })
	}
}

func fileMode(t *testing.T, apiType string) {
	e := newEnv(t, apiType)
	// The Envoy has no Gateway: the clusters presenting a policy's client
	// certificate reach it only with its namespace's grant.
	e.serveArgs = []string{"--fleet-namespaces", envoyNodeFleet + "=" + ns}
	p := newPKI(t, e.pkiDir)
	b := startBackends(t, e, p)
	s := newSummary("file mode, Envoy ADS "+apiType, e.root)

	cases := trafficCases(t, p, b)
	for _, c := range cases {
		writeManifests(t, e.manifestDir, c.name, c.objects()...)
	}
	writeManifests(t, e.manifestDir, "two-ports", twoPortsObjects(p, b)...)
	writeManifests(t, e.manifestDir, "ca-rotation", rotationObjects(p.ca, b.rotating)...)
	writeManifests(t, e.manifestDir, clientRotationSvc, clientRotationObjects(p, b.mtls, p.envoyClient)...)
	writeManifests(t, e.manifestDir, crlUpdateSvc, crlUpdateObjects(p, b.main, p.ca.CRL(t, time.Now().Add(24*time.Hour), p.revoked))...)
	writeManifests(t, e.manifestDir, overlapSvc, overlapObjects(p.ca.PEM, b.overlap)...)
	writeManifests(t, e.manifestDir, brokenSvc, brokenFileObjects(p, b)...)

	e.startTLSPlane(t)
	e.envoy = startEnvoy(t, e)

	for _, c := range cases {
		s.run(t, c.name, func(t *testing.T) { c.run(t, e, s) })
	}
	s.run(t, "two-ports-section-name", func(t *testing.T) { twoPorts(t, e, b, s) })
	s.run(t, "ca-rotation", func(t *testing.T) { caRotation(t, e, p, b, s) })
	s.run(t, "ca-rotation-with-overlap-zero-failures", func(t *testing.T) { caRotationOverlap(t, e, p, b, s) })
	s.run(t, "client-certificate-rotation", func(t *testing.T) { clientRotation(t, e, p, b, s) })
	s.run(t, "crl-update-revokes-the-backend", func(t *testing.T) { crlUpdate(t, e, p, b, s) })
	s.run(t, "configmap-deleted-fails-closed", func(t *testing.T) { configMapDeleted(t, e, p, b, s) })
	s.run(t, "endpoints-move-without-cluster-rebuild", func(t *testing.T) { endpointsMove(t, e, p, b, s) })
	s.run(t, "policy-edit-changes-sni", func(t *testing.T) { policyEdit(t, e, p, b, s) })
	s.run(t, "unready-endpoint-gets-no-traffic", func(t *testing.T) { unreadyEndpoint(t, e, p, b, s) })
	s.run(t, "broken-file-keeps-last-good-state", func(t *testing.T) { brokenFile(t, e, p, b, s) })
	s.run(t, "tlsplane-restart", func(t *testing.T) { restart(t, e, b, s) })
	s.run(t, "envoy-rejected-nothing", func(t *testing.T) {
		st, err := e.envoy.Stats()
		if err != nil {
			t.Fatal(err)
		}
		subscriptions := filterSuffix(st, ".update_rejected")
		var rejected []string
		for k, v := range subscriptions {
			if v != 0 {
				rejected = append(rejected, fmt.Sprintf("%s=%d", k, v))
			}
		}
		s.note("envoy-rejected-nothing", "%d xDS subscriptions checked", len(subscriptions))
		if len(rejected) > 0 {
			t.Errorf("Envoy rejected configuration from tlsplane: %s", strings.Join(rejected, ", "))
		}
	})
	s.run(t, "no-plaintext-to-tls-backends", func(t *testing.T) {
		for _, be := range []*backend{b.main, b.tls12, b.expired, b.selfSigned, b.p384, b.sentinel, b.rotating, b.overlap} {
			if c := be.counts(t); c.Plaintext != 0 {
				t.Errorf("backend %s received %d plaintext requests", be.name, c.Plaintext)
			}
		}
	})
}

// Envoy's per-cluster TLS failure counters: a chain that does not verify, a
// certificate whose SANs do not match, a pin that does not match, and a
// handshake that failed before any certificate check.
const (
	failChain = "ssl.fail_verify_error"
	failSAN   = "ssl.fail_verify_san"
	failPin   = "ssl.fail_verify_cert_hash"
	failTLS   = "ssl.connection_error"
)

func cm(name string, pemData []byte) []object { return []object{caConfigMap(name, pemData)} }

func trafficCases(t *testing.T, p *pki, b *backends) []trafficCase {
	crl := p.ca.CRL(t, time.Now().Add(24*time.Hour), p.revoked)
	expiredCRL := p.ca.CRL(t, time.Now().Add(-time.Minute), p.revoked)
	foreignCRL := p.otherCA.CRL(t, time.Now().Add(24*time.Hour))
	ref := func(name string) []caRef { return []caRef{{name: name}} }
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	newer := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	return []trafficCase{
		{name: "happy-path", be: b.main, cas: cm("ca-happy", p.ca.PEM),
			policies: []policy{{name: "happy", caRefs: ref("ca-happy"), hostname: hostAbc}},
			want:     outcome{ok: true, sni: hostAbc, tlsVersion: "TLS 1.3"}},
		{name: "ca-from-secret", be: b.main, cas: []object{caSecret("ca-secret", p.ca.PEM)},
			policies: []policy{{name: "secret", caRefs: []caRef{{kind: "Secret", name: "ca-secret"}}, hostname: hostOther}},
			want:     outcome{ok: true, sni: hostOther}},
		{name: "hostname-not-in-certificate", be: b.main, cas: cm("ca-wronghost", p.ca.PEM),
			policies: []policy{{name: "wronghost", caRefs: ref("ca-wronghost"), hostname: "wrong.example.com"}},
			want:     outcome{sni: "wrong.example.com", failStat: failSAN}},
		{name: "wrong-ca", be: b.main, cas: cm("ca-unrelated", p.otherCA.PEM),
			policies: []policy{{name: "wrongca", caRefs: ref("ca-unrelated"), hostname: hostAbc}},
			want:     outcome{sni: hostAbc, failStat: failChain}},

		// Fail closed: never plaintext, nothing reaches the backend.
		{name: "missing-configmap", be: b.sentinel, failClosed: true,
			policies: []policy{{name: "nocm", caRefs: ref("does-not-exist"), hostname: hostAbc}}},
		{name: "missing-ca-key", be: b.sentinel, failClosed: true, cas: []object{configMapWithout("ca-nokey", p.ca.PEM)},
			policies: []policy{{name: "nokey", caRefs: ref("ca-nokey"), hostname: hostAbc}}},
		{name: "invalid-kind", be: b.sentinel, failClosed: true, cas: cm("ca-kind", p.ca.PEM),
			policies: []policy{{name: "kind", caRefs: []caRef{{group: "example.com", kind: "ConfigMap", name: "ca-kind"}}, hostname: hostAbc}}},
		{name: "garbage-ca-pem", be: b.sentinel, failClosed: true, cas: cm("ca-garbage", []byte("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n")),
			policies: []policy{{name: "garbage", caRefs: ref("ca-garbage"), hostname: hostAbc}}},
		{name: "insecure-skip-verify-without-opt-in-fails-closed", be: b.sentinel, failClosed: true, cas: cm("ca-insecure", p.ca.PEM),
			policies: []policy{{name: "insecure", caRefs: ref("ca-insecure"), hostname: hostAbc, options: map[string]string{"insecureSkipVerify": "true"}}}},
		{name: "invalid-option-fails-closed", be: b.sentinel, failClosed: true, cas: cm("ca-badopt", p.ca.PEM),
			policies: []policy{{name: "badopt", caRefs: ref("ca-badopt"), hostname: hostAbc, options: map[string]string{"minimumVersion": "TLSv9"}}}},

		// Conflicts: the winner's SNI.
		{name: "conflict-by-age", be: b.main, cas: cm("ca-age", p.ca.PEM),
			policies: []policy{
				{name: "aa-newer", created: newer, caRefs: ref("ca-age"), hostname: hostAbc},
				{name: "zz-older", created: old, caRefs: ref("ca-age"), hostname: hostOther},
			},
			want: outcome{ok: true, sni: hostOther}},
		{name: "conflict-by-name", be: b.main, cas: cm("ca-name", p.ca.PEM),
			policies: []policy{
				{name: "b-second", created: old, caRefs: ref("ca-name"), hostname: hostAbc},
				{name: "a-first", created: old, caRefs: ref("ca-name"), hostname: hostOther},
			},
			want: outcome{ok: true, sni: hostOther}},

		// subjectAltNames: once set, they alone authenticate.
		{name: "san-dns-match", be: b.main, cas: cm("ca-san1", p.ca.PEM),
			policies: []policy{{name: "san", caRefs: ref("ca-san1"), hostname: "sni-only.example.com", sans: []san{{dns: hostOther}}}},
			want:     outcome{ok: true, sni: "sni-only.example.com"}},
		{name: "san-dns-mismatch-hostname-alone-does-not-authenticate", be: b.main, cas: cm("ca-san2", p.ca.PEM),
			policies: []policy{{name: "san", caRefs: ref("ca-san2"), hostname: hostAbc, sans: []san{{dns: "nothere.example.com"}}}},
			want:     outcome{sni: hostAbc, failStat: failSAN}},
		{name: "san-uri-match", be: b.main, cas: cm("ca-san3", p.ca.PEM),
			policies: []policy{{name: "san", caRefs: ref("ca-san3"), hostname: "uri-only.example.com", sans: []san{{uri: spiffeID}}}},
			want:     outcome{ok: true, sni: "uri-only.example.com"}},
		{name: "san-uri-mismatch", be: b.main, cas: cm("ca-san4", p.ca.PEM),
			policies: []policy{{name: "san", caRefs: ref("ca-san4"), hostname: hostAbc, sans: []san{{uri: "spiffe://abc.example.com/someone-else"}}}},
			want:     outcome{sni: hostAbc, failStat: failSAN}},
		{name: "san-multiple-one-matches", be: b.main, cas: cm("ca-san5", p.ca.PEM),
			policies: []policy{{name: "san", caRefs: ref("ca-san5"), hostname: "multi.example.com", sans: []san{{dns: "nothere.example.com"}, {uri: spiffeID}}}},
			want:     outcome{ok: true, sni: "multi.example.com"}},
		{name: "san-multiple-none-matches", be: b.main, cas: cm("ca-san6", p.ca.PEM),
			policies: []policy{{name: "san", caRefs: ref("ca-san6"), hostname: hostAbc, sans: []san{{dns: "nothere.example.com"}, {uri: "spiffe://abc.example.com/someone-else"}}}},
			want:     outcome{sni: hostAbc, failStat: failSAN}},

		// tlsplane.io/clientCertificateRef: the backend requires a client
		// certificate its CA signed and names the one it saw.
		{name: "client-certificate", be: b.mtls, cas: []object{caConfigMap("ca-mtls1", p.ca.PEM), tlsSecret(ns, "envoy-client", p.envoyClient)},
			policies: []policy{{name: "mtls", caRefs: ref("ca-mtls1"), hostname: hostAbc, options: map[string]string{"clientCertificateRef": "envoy-client"}}},
			want:     outcome{ok: true, sni: hostAbc, clientSubject: "envoy-client"}},
		{name: "client-certificate-not-configured", be: b.mtls, cas: cm("ca-mtls2", p.ca.PEM),
			policies: []policy{{name: "mtls", caRefs: ref("ca-mtls2"), hostname: hostAbc}},
			want:     outcome{sni: hostAbc}},
		{name: "client-certificate-from-another-ca", be: b.mtls, cas: []object{caConfigMap("ca-mtls3", p.ca.PEM), tlsSecret(ns, "stranger-client", p.stranger)},
			policies: []policy{{name: "mtls", caRefs: ref("ca-mtls3"), hostname: hostAbc, options: map[string]string{"clientCertificateRef": "stranger-client"}}},
			want:     outcome{sni: hostAbc}},
		// Never without the certificate: a Secret that is missing fails closed.
		{name: "client-certificate-missing-secret", be: b.sentinel, failClosed: true, cas: cm("ca-mtls4", p.ca.PEM),
			policies: []policy{{name: "mtls", caRefs: ref("ca-mtls4"), hostname: hostAbc, options: map[string]string{"clientCertificateRef": "no-such-secret"}}}},

		// tlsplane.io/crlRef: the list revokes p.revoked, not p.main.
		{name: "crl-certificate-not-revoked", be: b.main, cas: []object{caConfigMap("ca-crl1", p.ca.PEM), crlConfigMap("crl1", crl)},
			policies: []policy{{name: "crl", caRefs: ref("ca-crl1"), hostname: hostAbc, options: map[string]string{"crlRef": "ConfigMap/crl1"}}},
			want:     outcome{ok: true, sni: hostAbc}},
		{name: "crl-certificate-revoked", be: b.revoked, cas: []object{caConfigMap("ca-crl2", p.ca.PEM), crlConfigMap("crl2", crl)},
			policies: []policy{{name: "crl", caRefs: ref("ca-crl2"), hostname: hostAbc, options: map[string]string{"crlRef": "ConfigMap/crl2"}}},
			want:     outcome{sni: hostAbc, failStat: failChain}},
		// A list past its nextUpdate: Envoy (BoringSSL) refuses every
		// certificate of its CA, revoked or not.
		{name: "crl-expired", be: b.main, cas: []object{caConfigMap("ca-crl3", p.ca.PEM), crlConfigMap("crl3", expiredCRL)},
			policies: []policy{{name: "crl", caRefs: ref("ca-crl3"), hostname: hostAbc, options: map[string]string{"crlRef": "ConfigMap/crl3"}}},
			want:     outcome{sni: hostAbc, failStat: failChain}},
		// A list another CA signed: the policy is not accepted.
		{name: "crl-foreign-fails-closed", be: b.sentinel, failClosed: true, cas: []object{caConfigMap("ca-crl4", p.ca.PEM), crlConfigMap("crl4", foreignCRL)},
			policies: []policy{{name: "crl", caRefs: ref("ca-crl4"), hostname: hostAbc, options: map[string]string{"crlRef": "ConfigMap/crl4"}}}},

		// tlsplane.io/subjectAltNameURIPrefixes: a SPIFFE trust domain (or
		// path) authenticates beside the hostname, which the certificate
		// does not carry here.
		{name: "san-uri-prefix-trust-domain", be: b.main, cas: cm("ca-san7", p.ca.PEM),
			policies: []policy{{name: "san", caRefs: ref("ca-san7"), hostname: "prefix-only.example.com", options: map[string]string{"subjectAltNameURIPrefixes": "spiffe://abc.example.com/"}}},
			want:     outcome{ok: true, sni: "prefix-only.example.com"}},
		{name: "san-uri-prefix-foreign-trust-domain", be: b.main, cas: cm("ca-san8", p.ca.PEM),
			policies: []policy{{name: "san", caRefs: ref("ca-san8"), hostname: "prefix-foreign.example.com", options: map[string]string{"subjectAltNameURIPrefixes": "spiffe://xyz.example.com/, spiffe://abc.example.com/other-path/"}}},
			want:     outcome{sni: "prefix-foreign.example.com", failStat: failSAN}},

		{name: "system-ca-does-not-trust-test-ca", be: b.main,
			policies: []policy{{name: "system", wellKnown: "System", hostname: hostAbc}},
			want:     outcome{sni: hostAbc, failStat: failChain}},

		// Options.
		{name: "tls12-backend-default-versions", be: b.tls12, cas: cm("ca-v12", p.ca.PEM),
			policies: []policy{{name: "v12", caRefs: ref("ca-v12"), hostname: hostAbc}},
			want:     outcome{ok: true, sni: hostAbc, tlsVersion: "TLS 1.2"}},
		{name: "minimum-version-tls13-vs-tls12-backend", be: b.tls12, cas: cm("ca-v13", p.ca.PEM),
			policies: []policy{{name: "v13", caRefs: ref("ca-v13"), hostname: hostAbc, options: map[string]string{"minimumVersion": "TLSv1_3"}}},
			want:     outcome{sni: hostAbc, failStat: failTLS}},
		{name: "ecdh-curves-without-p384-vs-p384-backend", be: b.p384, cas: cm("ca-curve1", p.ca.PEM),
			policies: []policy{{name: "curves", caRefs: ref("ca-curve1"), hostname: hostAbc, options: map[string]string{"ecdhCurves": "X25519,P-256"}}},
			want:     outcome{sni: hostAbc, failStat: failTLS}},
		{name: "ecdh-curves-with-p384", be: b.p384, cas: cm("ca-curve2", p.ca.PEM),
			policies: []policy{{name: "curves", caRefs: ref("ca-curve2"), hostname: hostAbc, options: map[string]string{"ecdhCurves": "P-384"}}},
			want:     outcome{ok: true, sni: hostAbc}},
		{name: "ciphers-shared-with-tls12-backend", be: b.tls12, cas: cm("ca-cipher1", p.ca.PEM),
			policies: []policy{{name: "ciphers", caRefs: ref("ca-cipher1"), hostname: hostAbc, options: map[string]string{"ciphers": "ECDHE-ECDSA-AES128-GCM-SHA256"}}},
			want:     outcome{ok: true, sni: hostAbc, tlsVersion: "TLS 1.2"}},
		{name: "ciphers-none-shared-with-tls12-backend", be: b.tls12, cas: cm("ca-cipher2", p.ca.PEM),
			policies: []policy{{name: "ciphers", caRefs: ref("ca-cipher2"), hostname: hostAbc, options: map[string]string{"ciphers": "ECDHE-RSA-AES128-GCM-SHA256"}}},
			want:     outcome{sni: hostAbc, failStat: failTLS}},
		{name: "signature-algorithms-ecdsa", be: b.main, cas: cm("ca-sig1", p.ca.PEM),
			policies: []policy{{name: "sig", caRefs: ref("ca-sig1"), hostname: hostAbc, options: map[string]string{"signatureAlgorithms": "ecdsa_secp256r1_sha256"}}},
			want:     outcome{ok: true, sni: hostAbc}},
		{name: "signature-algorithms-rsa-only-vs-ecdsa-backend", be: b.main, cas: cm("ca-sig2", p.ca.PEM),
			policies: []policy{{name: "sig", caRefs: ref("ca-sig2"), hostname: hostAbc, options: map[string]string{"signatureAlgorithms": "rsa_pss_rsae_sha256,rsa_pkcs1_sha256"}}},
			want:     outcome{sni: hostAbc, failStat: failTLS}},
		{name: "verify-certificate-hash-right", be: b.selfSigned, cas: cm("ca-pin1", p.selfSigned.CertPEM),
			policies: []policy{{name: "pin", caRefs: ref("ca-pin1"), hostname: hostAbc, options: map[string]string{"verifyCertificateHashes": "# the backend's leaf\n" + colonPairs(p.selfSigned.Fingerprint()) + "\n"}}},
			want:     outcome{ok: true, sni: hostAbc}},
		{name: "verify-certificate-hash-wrong", be: b.selfSigned, cas: cm("ca-pin2", p.selfSigned.CertPEM),
			policies: []policy{{name: "pin", caRefs: ref("ca-pin2"), hostname: hostAbc, options: map[string]string{"verifyCertificateHashes": p.main.Fingerprint()}}},
			want:     outcome{sni: hostAbc, failStat: failPin}},
		{name: "expired-certificate-refused", be: b.expired, cas: cm("ca-exp1", p.ca.PEM),
			policies: []policy{{name: "exp", caRefs: ref("ca-exp1"), hostname: hostAbc}},
			want:     outcome{sni: hostAbc, failStat: failChain}},
		{name: "allow-expired-certificate", be: b.expired, cas: cm("ca-exp2", p.ca.PEM),
			policies: []policy{{name: "exp", caRefs: ref("ca-exp2"), hostname: hostAbc, options: map[string]string{"allowExpiredCertificate": "true"}}},
			want:     outcome{ok: true, sni: hostAbc}},
		{name: "alpn-h2-backend-sees-http2", be: b.main, cas: cm("ca-alpn", p.ca.PEM),
			policies: []policy{{name: "alpn", caRefs: ref("ca-alpn"), hostname: hostAbc, options: map[string]string{"alpnProtocols": "h2"}}},
			want:     outcome{ok: true, sni: hostAbc, proto: "HTTP/2.0"}},

		{name: "service-without-policy-stays-plaintext", be: b.plain, want: outcome{ok: true, plain: true}},
	}
}

// colonPairs writes a fingerprint as upper-case colon-separated byte pairs,
// the other spelling tlsplane accepts.
func colonPairs(hex string) string {
	var pairs []string
	for i := 0; i+1 < len(hex); i += 2 {
		pairs = append(pairs, strings.ToUpper(hex[i:i+2]))
	}
	return strings.Join(pairs, ":")
}

// filterSuffix keeps the stats whose name ends in suffix.
func filterSuffix(stats map[string]int64, suffix string) map[string]int64 {
	out := map[string]int64{}
	for k, v := range stats {
		if strings.HasSuffix(k, suffix) {
			out[k] = v
		}
	}
	return out
}
