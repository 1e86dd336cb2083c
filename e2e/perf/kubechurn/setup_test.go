package kubechurn

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
	"github.com/tlsplane/tlsplane/e2e/harness"
)

// started is a world the benchmarks share: a real API server holding n
// Services with their objects, and the tlsplane binary in Kubernetes mode
// serving them. Envoy is each benchmark's own (its bootstrap differs).
type started struct {
	api    *apiserver.Server
	w      *world
	tp     *harness.TLSPlane
	logDir string
	// tlsplaneStarted is when tlsplane was started, after the objects.
	tlsplaneStarted time.Time
	// setup is bounded by -churn.setup: creating the objects and waiting
	// for everything to serve them.
	setup context.Context
}

// startWorld starts the API server, creates n Services (each with a CA
// ConfigMap, a BackendTLSPolicy and an EndpointSlice) and then tlsplane,
// which thus begins with one list of everything. Everything stops at the
// benchmark's cleanup.
func startWorld(b *testing.B, n int) *started {
	b.Helper()
	setup, cancel := context.WithTimeout(context.Background(), *churnSetup)
	b.Cleanup(cancel)
	api, err := apiserver.Start(setup)
	if err != nil {
		b.Fatalf("start API server: %v", err)
	}
	b.Cleanup(api.Stop)
	cfg := *api.Config
	cfg.QPS, cfg.Burst = 1000, 2000 // the load generator is not what is measured
	w := &world{n: n, kube: kubernetes.NewForConfigOrDie(&cfg), gateway: gwclient.NewForConfigOrDie(&cfg), config: &cfg,
		caPEM: string(harness.NewAuthority(b, "kubechurn CA").PEM)}
	began := time.Now()
	if err := w.create(setup, createWorkers); err != nil {
		b.Fatal(err)
	}
	b.Logf("created %d Services with policies, CA ConfigMaps and EndpointSlices in %s", n, time.Since(began).Round(time.Millisecond))

	logDir := b.TempDir()
	if dir := os.Getenv("KUBECHURN_LOG_DIR"); dir != "" {
		logDir = dir // kept after the run
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	tlsplaneStarted := time.Now()
	tp := harness.StartTLSPlane(b, harness.TLSPlaneOptions{
		Bin: harness.TLSPlaneBin(b), LogDir: logDir, Name: "tlsplane",
		Args:         []string{"--kubeconfig", api.Kubeconfig, "--leader-election-namespace", "default"},
		Env:          []string{"POD_NAME=kubechurn"},
		ReadyTimeout: *churnSetup,
	})
	return &started{api: api, w: w, tp: tp, logDir: logDir, setup: setup, tlsplaneStarted: tlsplaneStarted}
}

// createWorkers is how many Services are created at once: the API server
// and etcd share the machine's cores with the benchmark.
const createWorkers = 16
