package kube

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

const handshakesSucceeding = "tlsplane.io/HandshakesSucceeding"

// Short windows, so that expiry is seen within the test: a failure counts
// for handshakeWindow, and a failing condition's counts follow within
// messageRefresh.
const (
	handshakeWindow = 20 * time.Second
	messageRefresh  = time.Second
	statsFlush      = time.Second
)

// policyCondition is our entry's condition typ on ns/name, nil when absent.
func policyCondition(c clients, ns, name, typ string) (*metav1.Condition, error) {
	p, err := c.gateway.GatewayV1().BackendTLSPolicies(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	for _, a := range p.Status.Ancestors {
		if a.ControllerName == controller {
			return findCondition(a.Conditions, typ), nil
		}
	}
	return nil, fmt.Errorf("no ancestor entry of %s: %+v", controller, p.Status)
}

// failedCount is the count a failing message quotes ("report N TLS").
var failedCount = regexp.MustCompile(`report (\d+) TLS handshakes`)

// TestHandshakesAcrossReplicas: three replicas, a real Envoy connected to
// a replica that is not the leader sees handshakes fail (the policy names
// a host the backend's certificate does not). The leader, whose own Envoy
// sees nothing, writes HandshakesSucceeding=False within a few flushes,
// its count follows Envoy's own counter, and once that replica is killed
// the condition stays for what is left of the window, and no longer.
func TestHandshakesAcrossReplicas(t *testing.T) {
	bnet := newBackendNet(t)
	c := adminClients(t)
	e := &trafficEnv{t: t, c: c, ns: newNamespace(t, c), net: bnet, bin: harness.BackendBin(t, t.TempDir()), backend: map[string]*harness.Process{}}
	ns := e.ns
	lease := "handshakes"
	flags := append(leaseFlags(lease), "--namespaces", ns,
		"--leader-election-lease-duration", leaseDuration.String(),
		"--leader-election-renew-deadline", renewDeadline.String(),
		"--leader-election-retry-period", retryPeriod.String(),
		"--handshake-window", handshakeWindow.String(),
		"--handshake-message-refresh", messageRefresh.String())
	kubeconfig := serviceAccountKubeconfig(t)
	replicas := map[string]*controlPlane{}
	for _, name := range []string{"tlsplane-a", "tlsplane-b", "tlsplane-c"} {
		replicas[name] = startTLSPlane(t, name, kubeconfig, flags...)
	}
	ca := harness.NewAuthority(t, "handshakes CA")
	e.backendService("pay", 8443)
	e.startBackend("pay", 8443, ca, "pay.example.com")
	createCAConfigMap(t, c, ns, "pay-ca", string(ca.PEM))
	// The backend's certificate names pay.example.com, not this host.
	createPolicy(t, c, policy(ns, "pay", "pay", "", "pay-ca", "wrong.example.com"))
	expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)

	var leader string
	eventually(t, statusWait, "a leader", func() error {
		if leader = holder(t, c, lease); replicas[leader] == nil {
			return fmt.Errorf("holder %q", leader)
		}
		return nil
	})
	follower := "tlsplane-a"
	if leader == follower {
		follower = "tlsplane-b"
	}
	t.Logf("leader %s; the failing Envoy connects to %s", leader, follower)
	envoyAt := func(cp *controlPlane, node string) *kubeEnvoy {
		env := &kubeEnvoy{harness.StartEnvoy(t, harness.EnvoyOptions{
			Bin: harness.EnvoyBin(t), LogDir: t.TempDir(), Name: node, NodeID: node, Fleet: "edge",
			XDSAddress: cp.xds, StatPrefix: "kube", WaitReady: true, StatsFlush: statsFlush,
		})}
		showLogOnFailure(t, env.Process, 10*time.Second, 3000)
		return env
	}
	quiet := envoyAt(replicas[leader], "envoy-at-leader")
	failing := envoyAt(replicas[follower], "envoy-at-follower")
	cluster := clusterName(ns, "pay", 443)
	sanFailures := "cluster." + cluster + ".ssl.fail_verify_san"

	request := func(env *kubeEnvoy, n int) {
		t.Helper()
		for range n {
			r, err := env.Request(cluster, "/")
			if err != nil {
				t.Fatal(err)
			}
			if r.Status < 500 {
				t.Fatalf("a backend whose certificate does not match answered %d through Envoy", r.Status)
			}
		}
	}
	eventually(t, trafficWait, "Envoy has cluster "+cluster, func() error {
		body, err := harness.HTTPGet(failing.AdminURL("/clusters"))
		if err == nil && !strings.Contains(string(body), cluster+"::") {
			err = fmt.Errorf("not in /clusters")
		}
		return err
	})
	// Envoy's first flush is tlsplane's baseline; failures after it count.
	time.Sleep(2 * statsFlush)
	start := time.Now()
	request(failing, 3)
	eventually(t, statusWait, "HandshakesSucceeding=False/SubjectAltNameMismatch, written by the leader", func() error {
		got, err := policyCondition(c, ns, "pay", handshakesSucceeding)
		if err != nil {
			return err
		}
		if got == nil || got.Status != metav1.ConditionFalse || got.Reason != "SubjectAltNameMismatch" {
			return fmt.Errorf("%+v", got)
		}
		return nil
	})
	shown := time.Since(start)
	t.Logf("a failure heard by %s is on the status %s after the requests (flush %s)", follower, shown.Round(10*time.Millisecond), statsFlush)
	if w := replicas[follower].statusWrites(t); w != "0" {
		t.Errorf("the follower %s wrote status %s times", follower, w)
	}
	if body, err := harness.HTTPGet(quiet.AdminURL("/clusters")); err != nil || !strings.Contains(string(body), cluster+"::") {
		t.Fatalf("the leader's Envoy lacks %s: %v", cluster, err)
	}
	if n := quiet.stat(t, sanFailures); n != 0 {
		t.Fatalf("the leader's own Envoy counts %d failures: the test must not send it any", n)
	}

	// More failures, no flip: the message's count follows Envoy's counter.
	request(failing, 3)
	lastFailure := time.Now()
	var envoySays int64
	eventually(t, statusWait, "the message's count equals Envoy's "+sanFailures, func() error {
		envoySays = failing.stat(t, sanFailures)
		got, err := policyCondition(c, ns, "pay", handshakesSucceeding)
		if err != nil || got == nil {
			return fmt.Errorf("%+v %v", got, err)
		}
		m := failedCount.FindStringSubmatch(got.Message)
		if m == nil || m[1] != strconv.FormatInt(envoySays, 10) {
			return fmt.Errorf("message %q, Envoy says %d", got.Message, envoySays)
		}
		return nil
	})
	t.Logf("after more failures the message says %d, as Envoy does", envoySays)
	// Every replica's gauge counts the whole fleet; the counter is each
	// replica's own.
	gauge := fmt.Sprintf(`tlsplane_upstream_tls_window_failures{policy="%s/pay",reason="SubjectAltNameMismatch"} %d`, ns, envoySays)
	eventually(t, statusWait, "the leader's "+gauge, func() error {
		body, err := replicas[leader].get("/metrics")
		if err == nil && !strings.Contains(string(body), gauge) {
			err = fmt.Errorf("not in /metrics")
		}
		return err
	})

	// The replica that heard them dies: the condition stays while its
	// failures are in the window, and goes when they leave it.
	replicas[follower].stop(syscall.SIGKILL)
	failing.Stop(5 * time.Second)
	killed := time.Now()
	for time.Since(killed) < 5*time.Second {
		got, err := policyCondition(c, ns, "pay", handshakesSucceeding)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil || got.Status != metav1.ConditionFalse {
			t.Fatalf("%s after the replica that heard the failures died, the condition is %+v", time.Since(killed).Round(time.Millisecond), got)
		}
		time.Sleep(250 * time.Millisecond)
	}
	// A window, a bucket (window/6) and the expiry tick, plus a pass.
	limit := handshakeWindow + 2*handshakeWindow/6 + 5*time.Second
	eventually(t, limit+5*time.Second-time.Since(lastFailure), "the condition to go with the window", func() error {
		got, err := policyCondition(c, ns, "pay", handshakesSucceeding)
		if err != nil || got != nil {
			return fmt.Errorf("%+v %v", got, err)
		}
		return nil
	})
	t.Logf("the condition went %s after the last failure (window %s)", time.Since(lastFailure).Round(100*time.Millisecond), handshakeWindow)
	// Increases leave the window a bucket (window/6) at a time.
	if gone := time.Since(lastFailure); gone < handshakeWindow-handshakeWindow/6 {
		t.Errorf("the condition went %s after the last failure, before the window (%s, less a bucket) was over", gone, handshakeWindow)
	}

	// The policy fixed, the leader's own Envoy sees handshakes succeed.
	p := getPolicy(t, c, ns, "pay")
	p.Spec.Validation.Hostname = "pay.example.com"
	if _, err := c.gateway.GatewayV1().BackendTLSPolicies(ns).Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.envoy = quiet
	e.expectSNI("pay", "pay.example.com")
	// Envoy's first report of a counter may be the baseline: a handshake
	// after a flush counts for sure. A new backend closes the pooled
	// connections, so the next request handshakes again.
	time.Sleep(2 * statsFlush)
	e.startBackend("pay", 8443, ca, "pay.example.com")
	e.expectSNI("pay", "pay.example.com")
	eventually(t, statusWait, "HandshakesSucceeding=True", func() error {
		got, err := policyCondition(c, ns, "pay", handshakesSucceeding)
		if err != nil || got == nil || got.Status != metav1.ConditionTrue {
			return fmt.Errorf("%+v %v", got, err)
		}
		return nil
	})
}

// TestCAExpiryWarningOnStatus: a CA that expires in ten days puts a
// warning in the policy's Accepted message on the API server; a CA
// renewed for a year takes it away.
func TestCAExpiryWarningOnStatus(t *testing.T) {
	c := adminClients(t)
	ns := newNamespace(t, c)
	startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("caexpiry"), "--namespaces", ns)...)
	notAfter := time.Now().Add(10 * 24 * time.Hour).UTC().Truncate(time.Second)
	createService(t, c, ns, "pay")
	createCAConfigMap(t, c, ns, "ca", string(harness.NewAuthorityUntil(t, "expiring CA", notAfter).PEM))
	createPolicy(t, c, policy(ns, "pay", "pay", "", "ca", "pay.example.com"))
	want := fmt.Sprintf("Policy is accepted; warning: a CA certificate in ConfigMap %s/ca expires at %s, within 720h0m0s", ns, notAfter.Format(time.RFC3339))
	acceptedMessage := func(want func(string) error) {
		t.Helper()
		expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)
		eventually(t, statusWait, "the Accepted message", func() error {
			got, err := policyCondition(c, ns, "pay", "Accepted")
			if err != nil || got == nil {
				return fmt.Errorf("%+v %v", got, err)
			}
			return want(got.Message)
		})
	}
	acceptedMessage(func(m string) error {
		if m != want {
			return fmt.Errorf("message %q, want %q", m, want)
		}
		return nil
	})
	setCA(t, c, ns, "ca", string(harness.NewAuthorityUntil(t, "renewed CA", time.Now().Add(365*24*time.Hour)).PEM))
	acceptedMessage(func(m string) error {
		if strings.Contains(m, "warning") {
			return fmt.Errorf("message %q still warns", m)
		}
		return nil
	})
}
