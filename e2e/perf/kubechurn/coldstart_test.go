package kubechurn

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
	"github.com/tlsplane/tlsplane/e2e/harness"
)

var (
	coldServices = flag.Int("coldstart.services", 10000, "policy-targeted Services created before tlsplane starts")
	coldBound    = flag.Duration("coldstart.bound", 5*time.Minute, "bound on every policy getting its first status")
	coldArgs     = flag.String("coldstart.args", "", "extra tlsplane serve arguments, space-separated (e.g. --kube-api-qps=400)")
)

const (
	// bystanderInterval and bystanderBaseline: the other client's pace, and
	// its requests before tlsplane starts (the baseline).
	bystanderInterval = 100 * time.Millisecond
	bystanderBaseline = 50
)

// BenchmarkKubeColdStart (issue 37): -coldstart.services Services, each
// with a CA ConfigMap, a BackendTLSPolicy and an EndpointSlice, created in
// a real kube-apiserver with priority and fairness (APF) on, its default
// FlowSchemas; then the tlsplane binary starts in Kubernetes mode as a
// ServiceAccount (tlsplane-system/tlsplane, bound to cluster-admin by
// RBAC, not system:masters, so APF classifies it as it would in a
// cluster). A watch of the benchmark's (admin, exempt from APF) times each
// policy's first status.ancestors from tlsplane's start: first-s, p50-s,
// last-s; writes-per-s is policies / (last - first status).
//
// Meanwhile another ServiceAccount (default/bystander, ClusterRole view)
// LISTs ServiceAccounts in default every 100 ms: bystander-before-* over
// 50 requests before tlsplane starts, bystander-during-* from the start
// to the last status. The FlowSchema and priority level of each client are
// logged from the API server's X-Kubernetes-PF-* response headers and
// /metrics (apiserver_flowcontrol_*).
func BenchmarkKubeColdStart(b *testing.B) {
	b.Run(fmt.Sprintf("kube/services=%d", *coldServices), func(b *testing.B) {
		for range b.N {
			benchmarkKubeColdStart(b, *coldServices)
		}
	})
}

func benchmarkKubeColdStart(b *testing.B, n int) {
	tlsplaneBin := harness.TLSPlaneBin(b)
	for _, name := range []string{"etcd", "kube-apiserver"} {
		_, err := os.Stat(filepath.Join(apiserver.BinDir(), name))
		harness.Prerequisite(b, name+" not built (make kube-apiserver)", err)
	}
	setup, cancel := context.WithTimeout(context.Background(), *churnSetup+*coldBound)
	defer cancel()
	api, err := apiserver.StartWith(setup, apiserver.Options{PriorityAndFairness: true})
	if err != nil {
		b.Fatalf("start API server: %v", err)
	}
	defer api.Stop()
	cfg := *api.Config
	cfg.QPS, cfg.Burst = 1000, 2000 // the load generator is not what is measured
	kube := kubernetes.NewForConfigOrDie(&cfg)
	w := &world{n: n, kube: kube, gateway: gwclient.NewForConfigOrDie(&cfg), config: &cfg,
		caPEM: string(harness.NewAuthority(b, "kubechurn CA").PEM)}
	began := time.Now()
	if err := w.create(setup, createWorkers); err != nil {
		b.Fatal(err)
	}
	b.Logf("created %d Services with policies, CA ConfigMaps and EndpointSlices in %s (load %s)", n, time.Since(began).Round(time.Millisecond), loadAverage())

	tlsplaneToken, err := serviceAccountToken(setup, kube, "tlsplane-system", "tlsplane", "cluster-admin")
	if err != nil {
		b.Fatal(err)
	}
	// Its own ClusterRole: the aggregated view role is empty without the
	// controller-manager's aggregation controller.
	if _, err := kube.RbacV1().ClusterRoles().Create(setup, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "kubecold-bystander"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"get", "list"}}},
	}, metav1.CreateOptions{}); err != nil {
		b.Fatalf("create ClusterRole kubecold-bystander: %v", err)
	}
	bystanderToken, err := serviceAccountToken(setup, kube, "default", "bystander", "kubecold-bystander")
	if err != nil {
		b.Fatal(err)
	}
	kubeconfig := filepath.Join(b.TempDir(), "tlsplane.kubeconfig")
	if err := api.WriteKubeconfig(kubeconfig, "tlsplane", tlsplaneToken); err != nil {
		b.Fatal(err)
	}

	by := newBystander(api, bystanderToken)
	by.run(setup, bystanderBaseline)
	before := by.take()

	statuses, err := watchFirstStatuses(setup, w.gateway, n)
	if err != nil {
		b.Fatal(err)
	}
	byCtx, stopBystander := context.WithCancel(setup)
	byDone := make(chan struct{})
	go func() {
		defer close(byDone)
		by.run(byCtx, int(*coldBound/bystanderInterval))
	}()
	metricsBefore, err := flowcontrolMetrics(setup, kube)
	if err != nil {
		b.Fatal(err)
	}

	logDir := b.TempDir()
	if dir := os.Getenv("KUBECHURN_LOG_DIR"); dir != "" {
		logDir = dir
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	args := []string{"--kubeconfig", kubeconfig, "--leader-election-namespace", "default"}
	if *coldArgs != "" {
		args = append(args, splitArgs(*coldArgs)...)
	}
	statuses.start(time.Now())
	tp := harness.StartTLSPlane(b, harness.TLSPlaneOptions{
		Bin: tlsplaneBin, LogDir: logDir, Name: "tlsplane", Args: args,
		Env: []string{"POD_NAME=kubecold"}, ReadyTimeout: *coldBound,
	})
	ready := statuses.since()
	firsts, err := statuses.wait(*coldBound, tp.Exited)
	stopBystander()
	<-byDone
	during := by.take()
	if err != nil {
		b.Fatalf("%v\n--- tlsplane:\n%s", err, tp.LogTail(30))
	}
	metricsAfter, err := flowcontrolMetrics(setup, kube)
	if err != nil {
		b.Fatal(err)
	}

	first, last := firsts[0], firsts[len(firsts)-1]
	b.Logf("tlsplane ready %s after start; first status %s, p50 %s, p99 %s, last %s (load %s)",
		ready.Round(time.Millisecond), first.Round(time.Millisecond), percentile(firsts, 50).Round(time.Millisecond),
		percentile(firsts, 99).Round(time.Millisecond), last.Round(time.Millisecond), loadAverage())
	b.Logf("bystander before: %d requests, p50 %s, p99 %s, max %s, %d failed", len(before.ok),
		percentile(before.ok, 50), percentile(before.ok, 99), percentile(before.ok, 100), before.failed)
	b.Logf("bystander during: %d requests, p50 %s, p99 %s, max %s, %d failed", len(during.ok),
		percentile(during.ok, 50), percentile(during.ok, 99), percentile(during.ok, 100), during.failed)
	if err := by.firstError(); err != nil {
		b.Logf("bystander's first error: %v", err)
	}
	names, err := flowNames(setup, kube)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("bystander's flow: FlowSchema %s, priority level %s", names[by.schemaUID()], names[by.levelUID()])
	for _, line := range metricsDelta(metricsBefore, metricsAfter) {
		b.Logf("flowcontrol during the cold start: %s", line)
	}

	b.ReportMetric(first.Seconds(), "first-s")
	b.ReportMetric(percentile(firsts, 50).Seconds(), "p50-s")
	b.ReportMetric(last.Seconds(), "last-s")
	if span := last - first; span > 0 {
		b.ReportMetric(float64(len(firsts))/span.Seconds(), "writes-per-s")
	}
	b.ReportMetric(ms(percentile(before.ok, 50)), "bystander-before-p50-ms")
	b.ReportMetric(ms(percentile(before.ok, 99)), "bystander-before-p99-ms")
	b.ReportMetric(ms(percentile(during.ok, 50)), "bystander-during-p50-ms")
	b.ReportMetric(ms(percentile(during.ok, 99)), "bystander-during-p99-ms")
	b.ReportMetric(float64(during.failed), "bystander-failed")
	b.ReportMetric(0, "ns/op")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// serviceAccountToken creates namespace ns (if missing), ServiceAccount
// ns/name bound to clusterRole, and an hour's token of it.
func serviceAccountToken(ctx context.Context, kube kubernetes.Interface, ns, name, clusterRole string) (string, error) {
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !isAlreadyExists(err) {
		return "", fmt.Errorf("create namespace %s: %w", ns, err)
	}
	if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("create ServiceAccount %s/%s: %w", ns, name, err)
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "kubecold-" + ns + "-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: name}},
	}, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("bind ServiceAccount %s/%s to %s: %w", ns, name, clusterRole, err)
	}
	expiry := int64(3600)
	tok, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("TokenRequest for ServiceAccount %s/%s: %w", ns, name, err)
	}
	return tok.Status.Token, nil
}

// bystander is another client of the API server: a LIST of ServiceAccounts
// in default every bystanderInterval, on its own connection and identity.
type bystander struct {
	kube kubernetes.Interface
	mu   sync.Mutex
	ok   []time.Duration
	// failed counts errors (a 429 from APF among them); firstErr is the
	// first.
	failed   int
	firstErr error
	// schema and level are the last X-Kubernetes-PF-FlowSchema-UID and
	// -PriorityLevel-UID the API server answered with.
	schema, level string
}

type bystanderRun struct {
	ok     []time.Duration
	failed int
}

func newBystander(api *apiserver.Server, token string) *bystander {
	by := &bystander{}
	cfg := &rest.Config{Host: api.URL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: api.CAPEM},
		QPS: 100, Burst: 100}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return pfHeaders{rt, by} })
	by.kube = kubernetes.NewForConfigOrDie(cfg)
	return by
}

// pfHeaders records the APF response headers of every answer.
type pfHeaders struct {
	rt http.RoundTripper
	by *bystander
}

func (p pfHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := p.rt.RoundTrip(r)
	if err == nil {
		p.by.mu.Lock()
		if s := resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID"); s != "" {
			p.by.schema = s
		}
		if l := resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID"); l != "" {
			p.by.level = l
		}
		p.by.mu.Unlock()
	}
	return resp, err
}

// run makes at most count requests, one every bystanderInterval, until
// ctx ends; each is bounded by 10 s.
func (by *bystander) run(ctx context.Context, count int) {
	tick := time.NewTicker(bystanderInterval)
	defer tick.Stop()
	for range count {
		reqCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		began := time.Now()
		_, err := by.kube.CoreV1().ServiceAccounts("default").List(reqCtx, metav1.ListOptions{})
		took := time.Since(began)
		cancel()
		if ctx.Err() != nil {
			return
		}
		by.mu.Lock()
		if err != nil {
			by.failed++
			if by.firstErr == nil {
				by.firstErr = err
			}
		} else {
			by.ok = append(by.ok, took)
		}
		by.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// take returns the latencies so far, sorted, and starts afresh.
func (by *bystander) take() bystanderRun {
	by.mu.Lock()
	defer by.mu.Unlock()
	r := bystanderRun{ok: by.ok, failed: by.failed}
	by.ok, by.failed = nil, 0
	slices.Sort(r.ok)
	return r
}

func (by *bystander) firstError() error { by.mu.Lock(); defer by.mu.Unlock(); return by.firstErr }
func (by *bystander) schemaUID() string { by.mu.Lock(); defer by.mu.Unlock(); return by.schema }
func (by *bystander) levelUID() string  { by.mu.Lock(); defer by.mu.Unlock(); return by.level }

func isAlreadyExists(err error) bool {
	var status interface{ Status() metav1.Status }
	return errors.As(err, &status) && status.Status().Reason == metav1.StatusReasonAlreadyExists
}
