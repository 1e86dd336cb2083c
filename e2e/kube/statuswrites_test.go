package kube

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// manyPolicies is the size of the bursts below: a `kubectl apply` of a
// large namespace, or a first sync.
const manyPolicies = 1000

// TestStatusOfManyPolicies times how long the last of 1,000 policies
// waits for its status: present before tlsplane starts (the first sync),
// then 1,000 more created at once while it runs. Our own status writes
// come back as watch events, and must not cost a translation each. The
// bounds leave room for a slower machine: at the old client rate (50 per
// second) the last status came 18 s after tlsplane served, and 13-16 s
// after the last create, with 80-85 translations for the writes.
func TestStatusOfManyPolicies(t *testing.T) {
	const bound = 10 * time.Second
	c := fastClients(t)
	ns := newNamespace(t, c)
	createCAConfigMap(t, c, ns, "ca", string(harness.NewAuthority(t, "many CA").PEM))
	ready := watchAccepted(t, c, ns)

	createPolicies(t, c, ns, "first", manyPolicies)
	start := time.Now()
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("many"), "--namespaces", ns)...)
	served := time.Now()
	last := ready.waitFor(t, "first", manyPolicies, 2*time.Minute)
	settle(t, cp)
	passes, writes := cp.metricSum(t, "tlsplane_translation_duration_seconds_count"), cp.statusWrites(t)
	t.Logf("first sync: the last of %d policies had its status %s after tlsplane started (%s after it served); %s translations, %s status writes",
		manyPolicies, last.Sub(start).Round(10*time.Millisecond), last.Sub(served).Round(10*time.Millisecond), passes, writes)
	if d := last.Sub(served); d > bound {
		t.Errorf("first sync: the last status came %s after tlsplane served, want at most %s", d.Round(10*time.Millisecond), bound)
	}
	if n := atof(t, passes); n > 3 {
		t.Errorf("first sync: %.0f translations, want the first and hardly more: a status write of ours costs none", n)
	}
	if n := atof(t, writes); n != manyPolicies {
		t.Errorf("first sync: %.0f status writes, want one per policy", n)
	}

	begin := time.Now()
	created := createPolicies(t, c, ns, "burst", manyPolicies)
	passesCreated := cp.metricSum(t, "tlsplane_translation_duration_seconds_count")
	last = ready.waitFor(t, "burst", manyPolicies, 2*time.Minute)
	settle(t, cp)
	burstPasses := atof(t, cp.metricSum(t, "tlsplane_translation_duration_seconds_count")) - atof(t, passes)
	tailPasses := atof(t, cp.metricSum(t, "tlsplane_translation_duration_seconds_count")) - atof(t, passesCreated)
	burstWrites := atof(t, cp.statusWrites(t)) - atof(t, writes)
	t.Logf("burst: created %d policies in %s; the last had its status %s after the last create (%s after the first); %.0f translations (%.0f after the last create), %.0f status writes",
		manyPolicies, created.Sub(begin).Round(10*time.Millisecond), last.Sub(created).Round(10*time.Millisecond),
		last.Sub(begin).Round(10*time.Millisecond), burstPasses, tailPasses, burstWrites)
	if d := last.Sub(created); d > bound {
		t.Errorf("burst: the last status came %s after the last create, want at most %s", d.Round(10*time.Millisecond), bound)
	}
	if tailPasses > 3 {
		t.Errorf("burst: %.0f translations after the last create, want the trailing one or two: a status write of ours costs none", tailPasses)
	}
	if burstWrites != manyPolicies {
		t.Errorf("burst: %.0f status writes, want one per policy", burstWrites)
	}
}

// fastClients are admin clients fast enough to create a thousand objects
// in a few seconds.
func fastClients(t *testing.T) clients {
	t.Helper()
	cfg := rest.CopyConfig(api.Config)
	cfg.QPS, cfg.Burst = 2000, 2000
	k, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gwclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return clients{kube: k, gateway: g}
}

// createPolicies creates n Services prefix-<i>, then a policy for each,
// from a few goroutines, and returns when the last create returned. The
// Services come first: tlsplane watches Services and policies with two
// informers, with no order between their events, so a policy created
// right after its Service may be judged before the Service is seen, and
// its status written twice (TargetNotFound, then Accepted), both right.
func createPolicies(t *testing.T, c clients, ns, prefix string, n int) time.Time {
	t.Helper()
	inParallel(t, n, func(i int) error {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%04d", prefix, i)},
			// Headless: the test API server's Service IP range holds far fewer.
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443)}}},
		}
		_, err := c.kube.CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{})
		return err
	})
	inParallel(t, n, func(i int) error {
		name := fmt.Sprintf("%s-%04d", prefix, i)
		_, err := c.gateway.GatewayV1().BackendTLSPolicies(ns).Create(context.Background(),
			policy(ns, name, name, "", "ca", name+".example.com"), metav1.CreateOptions{})
		return err
	})
	return time.Now()
}

// inParallel runs create(0..n-1) from 16 goroutines and fails the test
// with the first error.
func inParallel(t *testing.T, n int, create func(i int) error) {
	t.Helper()
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range n {
			next <- i
		}
	}()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := create(i); err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("create %d objects: %v", n, firstErr)
	}
}

// acceptedLog records when each policy of a namespace was first seen
// (through a watch) with an Accepted entry of our controller at its
// generation.
type acceptedLog struct {
	mu sync.Mutex
	at map[string]time.Time
}

func watchAccepted(t *testing.T, c clients, ns string) *acceptedLog {
	t.Helper()
	l := &acceptedLog{at: map[string]time.Time{}}
	f := gwinformers.NewSharedInformerFactoryWithOptions(c.gateway, 0, gwinformers.WithNamespace(ns))
	inf := f.Gateway().V1().BackendTLSPolicies().Informer()
	seen := func(obj any) {
		p, ok := obj.(*gwv1.BackendTLSPolicy)
		if !ok || !acceptedByUs(p) {
			return
		}
		now := time.Now()
		l.mu.Lock()
		defer l.mu.Unlock()
		if _, ok := l.at[p.Name]; !ok {
			l.at[p.Name] = now
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, obj any) { seen(obj) }}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); f.Shutdown() })
	f.Start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		t.Fatal("policy watch did not sync")
	}
	return l
}

func acceptedByUs(p *gwv1.BackendTLSPolicy) bool {
	for _, a := range p.Status.Ancestors {
		if a.ControllerName != controller {
			continue
		}
		if c := findCondition(a.Conditions, "Accepted"); c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == p.Generation {
			return true
		}
	}
	return false
}

// waitFor waits until n policies named prefix-* are accepted and returns
// when the last of them was.
func (l *acceptedLog) waitFor(t *testing.T, prefix string, n int, timeout time.Duration) time.Time {
	t.Helper()
	var last time.Time
	eventually(t, timeout, fmt.Sprintf("%d policies %s-* accepted", n, prefix), func() error {
		l.mu.Lock()
		defer l.mu.Unlock()
		count := 0
		for name, at := range l.at {
			if strings.HasPrefix(name, prefix+"-") {
				count++
				if at.After(last) {
					last = at
				}
			}
		}
		if count < n {
			return fmt.Errorf("%d accepted", count)
		}
		return nil
	})
	return last
}

// settle waits until cp has translated nothing and written no status for
// a whole second.
func settle(t *testing.T, cp *controlPlane) {
	t.Helper()
	state := func() string {
		return cp.metricSum(t, "tlsplane_translation_duration_seconds_count") + " " + cp.statusWrites(t)
	}
	prev := state()
	eventually(t, time.Minute, cp.name+" settled", func() error {
		time.Sleep(time.Second)
		now := state()
		if now != prev {
			prev = now
			return fmt.Errorf("translations, writes went to %s", now)
		}
		return nil
	})
}

// metricSum is the sum of the samples of metric name (with any labels
// whose text contains every one of match) on cp's /metrics.
func (cp *controlPlane) metricSum(t *testing.T, name string, match ...string) string {
	t.Helper()
	body, err := cp.get("/metrics")
	if err != nil {
		t.Fatalf("%s: %v", cp.name, err)
	}
	var sum float64
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		sample, value, ok := strings.Cut(line, " ")
		if !ok || (sample != name && !strings.HasPrefix(sample, name+"{")) {
			continue
		}
		wanted := true
		for _, m := range match {
			wanted = wanted && strings.Contains(sample, m)
		}
		if !wanted {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			t.Fatalf("%s: /metrics line %q: %v", cp.name, line, err)
		}
		sum += v
	}
	return strconv.FormatFloat(sum, 'f', -1, 64)
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestOverwrittenStatusIsRestoredWithoutATranslation: our entry on a
// policy, overwritten by someone else, is written back as it was (its
// lastTransitionTime too), and neither that write nor ours coming back
// through the watch costs a translation.
func TestOverwrittenStatusIsRestoredWithoutATranslation(t *testing.T) {
	c := adminClients(t)
	ns := newNamespace(t, c)
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("restore"), "--namespaces", ns)...)
	createService(t, c, ns, "pay")
	createCAConfigMap(t, c, ns, "ca", string(harness.NewAuthority(t, "restore CA").PEM))
	createPolicy(t, c, policy(ns, "pay", "pay", "", "ca", "pay.example.com"))
	p := expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)
	since := ourAccepted(t, p).LastTransitionTime
	settle(t, cp)
	passes, statusEvents := cp.metricSum(t, "tlsplane_translation_duration_seconds_count"), cp.metricSum(t, "tlsplane_kube_events_total", `outcome="status"`)

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := getPolicy(t, c, ns, "pay")
		a := ourAccepted(t, p)
		a.Status, a.Reason, a.Message, a.LastTransitionTime = metav1.ConditionFalse, "Overwritten", "not tlsplane's", metav1.Now()
		_, err := c.gateway.GatewayV1().BackendTLSPolicies(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("overwrite our status: %v", err)
	}
	p = expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)
	if got := ourAccepted(t, p).LastTransitionTime; !got.Equal(&since) {
		t.Errorf("restored Accepted lastTransitionTime %s, want %s as before", got, since)
	}
	settle(t, cp)
	if got := cp.metricSum(t, "tlsplane_translation_duration_seconds_count"); got != passes {
		t.Errorf("translations went from %s to %s for a status overwritten and restored, want none", passes, got)
	}
	if got := atof(t, cp.metricSum(t, "tlsplane_kube_events_total", `outcome="status"`)) - atof(t, statusEvents); got < 2 {
		t.Errorf("%.0f status-only events, want theirs and ours", got)
	}
	expectNoWriteStorm(t, cp)
}

// ourAccepted is the Accepted condition of our first entry on p.
func ourAccepted(t *testing.T, p *gwv1.BackendTLSPolicy) *metav1.Condition {
	t.Helper()
	for i := range p.Status.Ancestors {
		if p.Status.Ancestors[i].ControllerName == controller {
			if c := findCondition(p.Status.Ancestors[i].Conditions, "Accepted"); c != nil {
				return c
			}
		}
	}
	t.Fatalf("no Accepted condition of ours on %s/%s: %+v", p.Namespace, p.Name, p.Status)
	return nil
}
