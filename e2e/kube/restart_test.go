package kube

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// Issue 24's API server restart during endpoint churn.
const (
	restartServices = 5
	restartRate     = 10 // EndpointSlice updates a second, over all Services
	// recoveryBound bounds the time from the restarted API server's first
	// ready /readyz to the first change made after it being served. With
	// tlsplane's requests waiting out the outage (informers.WaitForAPIServer,
	// sent again every 250 ms) seven runs measured 0.03–0.5 s; without, the
	// reflectors' grown backoff took 16.7, 18.8 and 24.4 s. 3 s: the issue's
	// target of a second or two, with room for a 2-core machine shared
	// with other heavy tests.
	recoveryBound = 3 * time.Second
	// statusBound bounds the time from readiness to the status of a policy
	// edited right then being written: the Lease taken again (lost during
	// the outage), the status debounce (at most 1 s while changes keep
	// coming) and the write. Measured 1.3–2.3 s; 18.8–27.9 s before.
	statusBound = 10 * time.Second
	// restartPatience bounds what is not the measured figure (catching up
	// with the final state, statuses), generous for the build without the
	// fix, so a run of it reports its figures instead of stopping early.
	restartPatience = 90 * time.Second
)

// TestAPIServerRestart: EndpointSlice churn (10 updates a second over 5
// Services, each with a BackendTLSPolicy) runs before, during and after a
// 30 s restart of kube-apiserver (etcd runs on; during the outage the churn
// goes through a second API server on the same etcd). The first change made
// once the restarted API server is ready is served within recoveryBound;
// every slice ends served in the state the API server holds (no update
// lost), a status change made right after the restart is written within
// statusBound, and every policy's status is Accepted and ResolvedRefs at
// its generation.
func TestAPIServerRestart(t *testing.T) {
	c := adminClients(t)
	ns := newNamespace(t, c)
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("restart"), "--namespaces", ns)...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	createCAConfigMap(t, c, ns, "ca", string(harness.NewAuthority(t, "restart CA").PEM))
	for i := range restartServices {
		createService(t, c, ns, churnService(i))
		createPolicy(t, c, policy(ns, churnService(i), churnService(i), "", "ca", churnService(i)+".example.com"))
	}
	churn, err := newSliceChurn(ctx, c.kube, ns, restartServices)
	if err != nil {
		t.Fatal(err)
	}
	served, streamDone, err := watchServedGenerations(ctx, cp, ns, restartServices, "edge")
	if err != nil {
		t.Fatal(err)
	}
	if err := served.waitAll(churn.latest(), statusWait); err != nil {
		t.Fatalf("first state not served: %v", err)
	}
	for i := range restartServices {
		expectStatus(t, c, ns, churnService(i), acceptedTrue, resolvedTrue)
	}

	churnCtx, stopChurn := context.WithCancel(ctx)
	churned := make(chan struct{})
	go func() { defer close(churned); churn.run(churnCtx, restartRate) }()
	defer func() { stopChurn(); <-churned }()
	time.Sleep(5 * time.Second)
	// Every update made before the restart is served.
	before := churn.latest()
	for i, g := range before {
		if _, ok := served.waitReached(i, g, statusWait); !ok {
			t.Fatalf("%s: generation %d, made before the restart, not served", churnService(i), g)
		}
	}

	down := time.Now()
	restart := stopAPIServer(t)
	// Meanwhile the churn goes on through a second API server, stopped
	// before the first one returns.
	startCtx, cancelStart := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelStart()
	second, err := api.StartSecond(startCtx)
	if err != nil {
		t.Fatalf("second API server: %v", err)
	}
	kube2, err := kubernetes.NewForConfig(second.Config)
	if err != nil {
		second.Stop()
		t.Fatal(err)
	}
	var fallback kubernetes.Interface = kube2
	churn.fallback.Store(&fallback)
	duringFrom := churn.count()
	for time.Since(down) < outage-3*time.Second {
		if _, err := cp.get("/readyz"); err != nil {
			t.Fatalf("%s into the outage: /readyz: %v", time.Since(down).Round(time.Second), err)
		}
		time.Sleep(time.Second)
	}
	churn.fallback.Store(nil)
	second.Stop()
	during := churn.count() - duringFrom
	time.Sleep(time.Until(down.Add(outage)))

	ready := readyzPoller(t, api.Config)
	if err := restart(startCtx); err != nil {
		t.Fatalf("restart kube-apiserver after %s: %v", time.Since(down).Round(time.Second), err)
	}
	readyAt := <-ready
	if readyAt.IsZero() {
		t.Fatal("kube-apiserver restarted, but its /readyz never said ok to the test's poller")
	}
	t.Logf("kube-apiserver down for %s (ready again at /readyz), %d updates made through the second API server meanwhile", readyAt.Sub(down).Round(100*time.Millisecond), during)

	// A status change right after the restart: a new hostname is a new
	// generation, whose conditions tlsplane must write.
	changed := churnService(0)
	pol, err := c.gateway.GatewayV1().BackendTLSPolicies(ns).Get(ctx, changed, metav1.GetOptions{})
	if err == nil {
		pol.Spec.Validation.Hostname = gwv1.PreciseHostname("after-restart.example.com")
		_, err = c.gateway.GatewayV1().BackendTLSPolicies(ns).Update(ctx, pol, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatalf("policy edit right after the restart: %v", err)
	}

	// Recovery: the first update begun after readiness, served.
	var first sliceUpdate
	eventually(t, 10*time.Second, "an update made after the restart", func() error {
		made, _ := churn.updates()
		for _, u := range made {
			if u.start.After(readyAt) {
				first = u
				return nil
			}
		}
		return fmt.Errorf("none of %d updates begun after %s", len(made), readyAt.Format("15:04:05.000"))
	})
	at, ok := served.waitReached(first.slice, first.gen, restartPatience)
	if !ok {
		t.Fatalf("%s generation %d, made %s after the API server was ready, not served within %s",
			churnService(first.slice), first.gen, first.start.Sub(readyAt).Round(time.Millisecond), restartPatience)
	}
	recovery := at.Sub(readyAt)
	t.Logf("recovery: the first change made after the API server was ready (%s later) was served %s after it was ready",
		first.start.Sub(readyAt).Round(time.Millisecond), recovery.Round(time.Millisecond))
	if recovery > recoveryBound {
		t.Errorf("recovery took %s, want at most %s", recovery.Round(time.Millisecond), recoveryBound)
	}

	p := expectStatusWithin(t, restartPatience, c, ns, changed, acceptedTrue, resolvedTrue)
	written := time.Since(readyAt)
	t.Logf("the policy edited after the restart has its status at generation %d %s after the API server was ready",
		p.Generation, written.Round(100*time.Millisecond))
	if written > statusBound {
		t.Errorf("the status of the policy edited after the restart took %s, want at most %s", written.Round(100*time.Millisecond), statusBound)
	}

	// The churn goes on a while, then every slice ends served as stored.
	time.Sleep(time.Until(readyAt.Add(5 * time.Second)))
	stopChurn()
	<-churned
	stored, err := churn.stored(ctx)
	if err != nil {
		t.Fatal(err)
	}
	made, failed := churn.updates()
	for i, g := range churn.latest() {
		if stored[i] < g {
			t.Fatalf("%s: the API server holds generation %d, older than %d the churn made", churnService(i), stored[i], g)
		}
	}
	if err := served.waitAll(stored, restartPatience); err != nil {
		t.Fatalf("the last state of every slice is not served: %v", err)
	}
	select {
	case err := <-streamDone:
		t.Fatalf("the ADS stream ended: %v", err)
	default:
	}
	t.Logf("%d updates accepted (%d through the second API server), %d failed while no API server answered", len(made), during, failed)

	for i := range restartServices {
		expectStatusWithin(t, restartPatience, c, ns, churnService(i), acceptedTrue, resolvedTrue)
	}
	// Conflicts are stale copies caught by resourceVersion, retried from
	// a fresh read: counted, never an overwrite.
	t.Logf("status writes: %s written, %s conflicts (retried), %s errors",
		cp.metricSum(t, "tlsplane_status_writes_total", `result="written"`),
		cp.metricSum(t, "tlsplane_status_writes_total", `result="conflict"`),
		cp.metricSum(t, "tlsplane_status_writes_total", `result="error"`))
	if _, err := cp.get("/readyz"); err != nil {
		t.Fatalf("/readyz after the restart: %v", err)
	}
}

// readyzPoller polls the API server's /readyz every 50 ms from now and
// sends the time of the first "ok": readiness as a client outside sees it.
func readyzPoller(t *testing.T, cfg *rest.Config) <-chan time.Time {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client.Timeout = time.Second
	ready := make(chan time.Time, 1)
	go func() {
		deadline := time.Now().Add(3 * time.Minute)
		for time.Now().Before(deadline) {
			resp, err := client.Get(cfg.Host + "/readyz")
			if err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK && string(body) == "ok" {
					ready <- time.Now()
					return
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		close(ready)
	}()
	return ready
}
