package envoy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// statsFlush is the Envoy's metrics service flush interval in this test;
// a condition must follow a backend within a few of them.
const statsFlush = time.Second

// handshakeTimeout is "a few flush intervals", plus the pipeline's debounce.
const handshakeTimeout = 8 * statsFlush

const handshakesSvc = "handshakes"

// TestHandshakeStatus proves tlsplane.io/HandshakesSucceeding through a
// real Envoy streaming its counters to tlsplane's metrics service: a
// backend whose certificate does not verify, then one whose SANs do not
// match, each shows on the policy's status with its reason, and each
// clears once the backend is fixed. Once on SotW ADS, once on delta.
func TestHandshakeStatus(t *testing.T) {
	for _, apiType := range []string{"GRPC", "DELTA_GRPC"} {
		t.Run(apiType, func(t *testing.T) { handshakeStatus(t, apiType) })
	}
}

func handshakeStatus(t *testing.T, apiType string) {
	e := newEnvIn(t, apiType, "handshakes-"+strings.ToLower(apiType))
	ca := harness.NewAuthority(t, "tlsplane e2e handshakes CA")
	good := issue(t, ca, e.pkiDir, "hs-good", harness.LeafSpec{})
	stranger := issue(t, harness.NewAuthority(t, "unrelated CA"), e.pkiDir, "hs-stranger", harness.LeafSpec{})
	wrongSAN := ca.Issue(t, harness.LeafSpec{CommonName: "wrong.example.com", DNSNames: []string{"wrong.example.com"}})
	// unpinned chains to the CA and names the host, but the policy pins good.
	unpinned := issue(t, ca, e.pkiDir, "hs-unpinned", harness.LeafSpec{})
	// The backend serves the files of "hs-live"; the test swaps their content.
	live := issue(t, ca, e.pkiDir, "hs-live", harness.LeafSpec{})
	stranger.WriteFiles(t, live.CertFile, live.KeyFile)
	be := startBackend(t, e, "handshakes", backendOpts{leaf: live})

	pol := policy{name: "handshakes", targets: []target{{svc: handshakesSvc}}, caRefs: []caRef{{name: "ca-handshakes"}}, hostname: hostAbc,
		options: map[string]string{"verifyCertificateHashes": good.Fingerprint()}}
	objs := serviceWithEndpoints(handshakesSvc, svcPort{name: "https", port: svcPortNumber, backendPort: be.port})
	writeManifests(t, e.manifestDir, handshakesSvc, append(objs, caConfigMap("ca-handshakes", ca.PEM), pol.object())...)
	e.serveArgs = []string{"--handshake-window", "30s"}
	e.startTLSPlane(t)
	e.envoy = &envoyProxy{harness.StartEnvoy(t, harness.EnvoyOptions{
		Bin: e.envoyBin, LogDir: e.logDir, APIType: e.apiType,
		NodeID: envoyNodeID, Fleet: envoyNodeFleet, XDSAddress: "127.0.0.1:" + strconv.Itoa(e.xdsPort),
		WaitReady: true, StatsFlush: statsFlush,
	})}
	cluster := clusterName(handshakesSvc, svcPortNumber)
	e.waitCluster(t, cluster, activeTLS(hostAbc, be.port))

	if c, err := handshakeCondition(e, pol.name); err != nil || c != nil {
		t.Fatalf("before any handshake: condition %+v (%v), want none", c, err)
	}
	steps := []struct {
		name       string
		leaf       *harness.Leaf
		curves     string // the backend's key-exchange groups; Go's when ""
		status     string
		reason     string
		wantStatus int
	}{
		{"certificate of another CA", nil, "", "False", "CertificateVerifyFailed", 503},
		{"fixed", good, "", "True", "HandshakesSucceeding", 200},
		{"certificate without the hostname", wrongSAN, "", "False", "SubjectAltNameMismatch", 503},
		{"fixed again", good, "", "True", "HandshakesSucceeding", 200},
		{"certificate that is not the pinned one", unpinned, "", "False", "CertificateHashMismatch", 503},
		{"pinned certificate back", good, "", "True", "HandshakesSucceeding", 200},
		// Envoy offers X25519 and P-256 only: no shared group, no certificate seen.
		{"no shared key-exchange group", good, "P-384", "False", "HandshakeFailed", 503},
		{"groups fixed", good, "", "True", "HandshakesSucceeding", 200},
	}
	for i, step := range steps {
		if step.leaf != nil {
			// A restart closes Envoy's pooled connections, so the next
			// request makes a new handshake with the new certificate.
			step.leaf.WriteFiles(t, live.CertFile, live.KeyFile)
			be.proc.Stop(5 * time.Second)
			be = startBackend(t, e, fmt.Sprintf("handshakes-%d", i), backendOpts{leaf: live, port: be.port, curves: step.curves})
		}
		start := time.Now()
		var last *condition
		var lastResp response
		err := harness.Eventually(handshakeTimeout, 250*time.Millisecond, func() error {
			// Traffic makes the handshakes whose counters Envoy reports.
			r, err := e.tryRequest(cluster, "/handshakes")
			if err != nil {
				return err
			}
			lastResp = r
			c, err := handshakeCondition(e, pol.name)
			if err != nil {
				return err
			}
			last = c
			if c == nil || c.Status != step.status || c.Reason != step.reason {
				return fmt.Errorf("condition %+v", c)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: within %s the policy did not show %s %s: %v (last request: %s)\n--- tlsplane log:\n%s",
				step.name, handshakeTimeout, step.status, step.reason, err, lastResp, e.tlsplane.LogTail(10))
		}
		t.Logf("%s: %s %s after %s: %s", step.name, last.Status, last.Reason, time.Since(start).Round(10*time.Millisecond), last.Message)
		if lastResp.Status != step.wantStatus {
			t.Errorf("%s: request answered %s, want %d", step.name, lastResp, step.wantStatus)
		}
		if step.status == "False" {
			for _, want := range []string{`fleet "` + envoyNodeFleet + `"`, "cluster " + cluster, "in the last 30s"} {
				if !strings.Contains(last.Message, want) {
					t.Errorf("%s: message %q lacks %q", step.name, last.Message, want)
				}
			}
		}
	}
	metrics, err := harness.HTTPGet(e.tlsplaneURL("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	for _, reason := range []string{"CertificateVerifyFailed", "SubjectAltNameMismatch"} {
		series := fmt.Sprintf(`tlsplane_upstream_tls_failures_total{policy="%s/%s",reason="%s"}`, ns, pol.name, reason)
		if !strings.Contains(string(metrics), series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
}

// condition is a status condition as /debug/status shows it.
type condition struct {
	Type, Status, Reason, Message string
}

// handshakeCondition reads tlsplane.io/HandshakesSucceeding of policy
// ns/name from tlsplane's /debug/status; nil when absent.
func handshakeCondition(e *env, name string) (*condition, error) {
	body, err := harness.HTTPGet(e.tlsplaneURL("/debug/status"))
	if err != nil {
		return nil, err
	}
	c, _, err := policyHandshakeCondition(body, ns, name)
	return c, err
}

// policyHandshakeCondition finds tlsplane.io/HandshakesSucceeding of
// policy namespace/name in a /debug/status document, with the kind and
// name of the ancestor entry it is on; nil when absent.
func policyHandshakeCondition(body []byte, namespace, name string) (*condition, string, error) {
	var doc struct {
		Policies []struct {
			Namespace, Name string
			Status          struct {
				Ancestors []struct {
					AncestorRef struct{ Kind, Name string }
					Conditions  []condition
				}
			}
		}
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, "", fmt.Errorf("/debug/status: %w", err)
	}
	for _, p := range doc.Policies {
		if p.Namespace != namespace || p.Name != name {
			continue
		}
		for _, a := range p.Status.Ancestors {
			for _, c := range a.Conditions {
				if c.Type == "tlsplane.io/HandshakesSucceeding" {
					return &c, a.AncestorRef.Kind + "/" + a.AncestorRef.Name, nil
				}
			}
		}
		return nil, "", nil
	}
	return nil, "", fmt.Errorf("/debug/status has no policy %s/%s", namespace, name)
}
