package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// edgeNS holds a Service only fleet edge is served: --fleet-namespaces
// restricts fleet shop to ns.
const edgeNS = "faults-edge"

// statusJSON is what this test reads of `tlsplane status -o json`.
type statusJSON struct {
	At          time.Time `json:"at"`
	Connections []struct {
		Node  string `json:"node"`
		Fleet string `json:"fleet"`
		API   string `json:"api"`
		Peer  string `json:"peer"`
		Types []struct {
			TypeURL string `json:"typeURL"`
			State   string `json:"state"`
			Sent    string `json:"sent"`
			Acked   string `json:"acked"`
			NACK    *struct {
				Version string `json:"version"`
				Message string `json:"message"`
			} `json:"nack"`
		} `json:"types"`
	} `json:"connections"`
}

// state is node's state of typeURL, "" when absent.
func (s statusJSON) state(node, typeURL string) string {
	for _, c := range s.Connections {
		if c.Node == node {
			for _, ty := range c.Types {
				if ty.TypeURL == typeURL {
					return ty.State
				}
			}
		}
	}
	return ""
}

const (
	cdsType = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	edsURL  = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
	sdsType = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"
)

// inNamespace moves objs to namespace.
func inNamespace(objs []object, namespace string) []object {
	for _, o := range objs {
		o["metadata"].(object)["namespace"] = namespace
	}
	return objs
}

// runStatus runs `tlsplane status ARGS --admin` against the env's tlsplane,
// as an operator would, and returns stdout, stderr and the exit code.
func (e *env) runStatus(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.tlsplaneBin, append([]string{"status", "--admin", "127.0.0.1:" + strconv.Itoa(e.adminPort)}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("tlsplane status %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}

func (e *env) statusJSON(t *testing.T) (statusJSON, string) {
	t.Helper()
	out, stderr, code := e.runStatus(t, "-o", "json")
	if code != 0 {
		t.Fatalf("tlsplane status -o json: exit %d: %s", code, stderr)
	}
	var s statusJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("tlsplane status -o json: %v\n%s", err, out)
	}
	return s, out
}

// TestStatusShowsNACKingEnvoy (issue 25): `tlsplane status`, the binary,
// against a real tlsplane serving three real Envoys: fleet shop over SotW
// and over delta, both SYNCED; fleet edge, also served a Service whose
// endpoint Envoy rejects, NACKED on EDS with Envoy's message, in the table
// and in -o json; `status policy` shows the conditions and clusters.
func TestStatusShowsNACKingEnvoy(t *testing.T) {
	e := newEnv(t, "")
	e.tlsplaneArgs = []string{"--fleet-namespaces", "shop=" + ns}
	steadyPort, brokenPort := e.startBackend(t, "steady"), e.startBackend(t, "broken")
	brokenFile := filepath.Join(e.manifestDir, "broken.yaml")
	harness.WriteAtomic(t, filepath.Join(e.manifestDir, "steady.yaml"), manifest(t, backendObjects("steady", steadyPort, e.pki.caPEM, hostMain)))
	harness.WriteAtomic(t, brokenFile, manifest(t, inNamespace(backendObjects("broken", brokenPort, e.pki.caPEM, hostMain), edgeNS)))
	e.startTLSPlane(t)
	xdsAddress := "127.0.0.1:" + strconv.Itoa(e.xdsPort)
	for _, o := range []struct {
		name, fleet, api string
		flush            time.Duration // reports the TLS counters: handshake windows
	}{
		{"sotw", "shop", "GRPC", time.Second}, {"delta", "shop", "DELTA_GRPC", 0}, {"edge", "edge", "GRPC", 0},
	} {
		envoy := harness.StartEnvoy(t, harness.EnvoyOptions{
			Bin: e.envoyBin, LogDir: e.logDir, Name: o.name, APIType: o.api, StatsFlush: o.flush,
			NodeID: "faults-" + o.name, Fleet: o.fleet, XDSAddress: xdsAddress, StatPrefix: "faults", WaitReady: true,
		})
		if o.flush > 0 {
			e.envoy = envoy // e.request's
		}
	}
	nodes := []string{"faults-sotw", "faults-delta", "faults-edge"}

	// All three hold what they were sent.
	var last string
	err := harness.Eventually(applyTimeout, 200*time.Millisecond, func() error {
		s, out := e.statusJSON(t)
		last = out
		for _, node := range nodes {
			for _, ty := range []string{cdsType, edsURL, sdsType} {
				if got := s.state(node, ty); got != "SYNCED" {
					return fmt.Errorf("%s %s is %q, want SYNCED", node, ty, got)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("before the fault: %v\n%s\n--- tlsplane log:\n%s", err, last, e.tlsplane.LogTail(20))
	}
	// A handshake on the SotW Envoy, for the policy's handshake window.
	e.waitServed(t, clusterName("steady"), "steady", hostMain)

	// Fleet edge's Envoy rejects the endpoint; fleet shop never sees it.
	harness.WriteAtomic(t, brokenFile, manifest(t, withAddress(inNamespace(backendObjects("broken", brokenPort, e.pki.caPEM, hostMain), edgeNS), badAddress)))
	var s statusJSON
	err = harness.Eventually(applyTimeout, 200*time.Millisecond, func() error {
		s, last = e.statusJSON(t)
		if got := s.state("faults-edge", edsURL); got != "NACKED" {
			return fmt.Errorf("faults-edge EDS is %q, want NACKED", got)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("after the fault: %v\n%s\n--- tlsplane log:\n%s", err, last, e.tlsplane.LogTail(20))
	}

	// -o json: served and acknowledged versions, Envoy's message.
	for _, c := range s.Connections {
		wantAPI, wantFleet := map[string]string{"faults-sotw": "sotw", "faults-delta": "delta", "faults-edge": "sotw"}[c.Node],
			map[string]string{"faults-sotw": "shop", "faults-delta": "shop", "faults-edge": "edge"}[c.Node]
		if c.API != wantAPI || c.Fleet != wantFleet || !strings.HasPrefix(c.Peer, "127.0.0.1:") {
			t.Errorf("%s: api %q, fleet %q, peer %q; want %s, %s, 127.0.0.1", c.Node, c.API, c.Fleet, c.Peer, wantAPI, wantFleet)
		}
		for _, ty := range c.Types {
			switch {
			case c.Node == "faults-edge" && ty.TypeURL == edsURL:
				if ty.NACK == nil || ty.NACK.Version != ty.Sent || ty.Sent == ty.Acked || !strings.Contains(ty.NACK.Message, badAddress) {
					t.Errorf("faults-edge EDS: sent %q, acked %q, NACK %+v; want the sent version rejected with a message naming %s", ty.Sent, ty.Acked, ty.NACK, badAddress)
				}
			case ty.State != "SYNCED" || ty.Sent != ty.Acked || ty.Sent == "":
				t.Errorf("%s %s: %s, sent %q, acked %q; want SYNCED", c.Node, ty.TypeURL, ty.State, ty.Sent, ty.Acked)
			}
		}
	}
	if len(s.Connections) != 3 {
		t.Errorf("%d connections, want 3:\n%s", len(s.Connections), last)
	}

	// The table: a row per Envoy, Envoy's message under the NACKing one.
	table, stderr, code := e.runStatus(t)
	if code != 0 {
		t.Fatalf("tlsplane status: exit %d: %s", code, stderr)
	}
	t.Logf("tlsplane status:\n%s", table)
	rows := map[string][]string{}
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != "NODE FLEET API PEER SINCE CDS EDS SDS LDS RDS" {
		t.Errorf("header %q", lines[0])
	}
	var note string
	for i, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasPrefix(f[0], "faults-") {
			rows[f[0]] = f
			if f[0] == "faults-edge" && i+2 < len(lines) {
				note = lines[i+2]
			}
		}
	}
	for node, want := range map[string]string{
		"faults-sotw":  "shop sotw SYNCED SYNCED SYNCED - -",
		"faults-delta": "shop delta SYNCED SYNCED SYNCED - -",
		"faults-edge":  "edge sotw SYNCED NACKED SYNCED - -",
	} {
		f := rows[node]
		if len(f) != 10 {
			t.Errorf("row of %s: %q, want 10 columns", node, f)
			continue
		}
		if got := strings.Join(append(f[1:3:3], f[5:]...), " "); got != want {
			t.Errorf("row of %s: %q, want %q", node, got, want)
		}
	}
	if !strings.HasPrefix(strings.TrimSpace(note), "EDS NACKED version ") || !strings.Contains(note, badAddress) {
		t.Errorf("under faults-edge: %q, want EDS NACKED with Envoy's message naming %s", note, badAddress)
	}

	// status policy: conditions per ancestor (the rejection among them
	// once a pass reported it), the clusters, the rejection.
	var out string
	err = harness.Eventually(applyTimeout, 200*time.Millisecond, func() error {
		var code int
		out, stderr, code = e.runStatus(t, "policy", edgeNS+"/broken-tls")
		if code != 0 {
			return fmt.Errorf("exit %d: %s", code, stderr)
		}
		if !regexp.MustCompile(`\n +` + regexp.QuoteMeta(dataPlaneCondition) + ` +False `).MatchString(out) {
			return fmt.Errorf("no %s False", dataPlaneCondition)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("tlsplane status policy %s/broken-tls: %v\n%s", edgeNS, err, out)
	}
	t.Logf("tlsplane status policy %s/broken-tls:\n%s", edgeNS, out)
	for _, want := range []string{"BackendTLSPolicy " + edgeNS + "/broken-tls", "Service " + edgeNS + "/broken", "Accepted", "ResolvedRefs",
		"\nCLUSTERS\n" + edgeNS + "/broken/443\n", "ENVOY REJECTIONS", badAddress} {
		if !strings.Contains(out, want) {
			t.Errorf("status policy lacks %q:\n%s", want, out)
		}
	}
	// -o json, with the handshake window fleet shop's SotW Envoy reports.
	var view struct {
		Ancestors []struct {
			Conditions []struct{ Type, Status string } `json:"conditions"`
		} `json:"ancestors"`
		Clusters []string `json:"clusters"`
		Windows  []struct {
			Fleet, Cluster string
			Failing        bool
		} `json:"handshakeWindows"`
	}
	err = harness.Eventually(applyTimeout, 200*time.Millisecond, func() error {
		out, stderr, code := e.runStatus(t, "policy", ns+"/steady-tls", "-o", "json")
		if code != 0 {
			return fmt.Errorf("exit %d: %s", code, stderr)
		}
		if err := json.Unmarshal([]byte(out), &view); err != nil {
			t.Fatalf("status policy -o json: %v\n%s", err, out)
		}
		if len(view.Windows) == 0 {
			return fmt.Errorf("no handshake window:\n%s", out)
		}
		return nil
	})
	if err != nil {
		t.Errorf("status policy %s/steady-tls -o json: %v", ns, err)
	}
	if len(view.Clusters) != 1 || view.Clusters[0] != clusterName("steady") || len(view.Ancestors) != 1 || len(view.Ancestors[0].Conditions) == 0 ||
		len(view.Windows) != 1 || view.Windows[0].Fleet != "shop" || view.Windows[0].Cluster != clusterName("steady") || view.Windows[0].Failing {
		t.Errorf("status policy %s/steady-tls -o json: %+v", ns, view)
	}
	out, _, _ = e.runStatus(t, "policy", ns+"/steady-tls")
	t.Logf("tlsplane status policy %s/steady-tls:\n%s", ns, out)

	// Errors an operator meets.
	_, stderr, code = e.runStatus(t, "policy", ns+"/nope")
	if code != 1 || !strings.Contains(stderr, "BackendTLSPolicy "+ns+"/nope: not found") {
		t.Errorf("an unknown policy: exit %d, %q", code, stderr)
	}
	closed := strconv.Itoa(harness.FreePort(t))
	cmd := exec.Command(e.tlsplaneBin, "status", "--admin", "127.0.0.1:"+closed)
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "port-forward deploy/tlsplane 19000") {
		t.Errorf("admin unreachable: %v, %s; want the port-forward line", err, msg)
	}
}
