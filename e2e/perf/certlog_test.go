package perf

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

var (
	certLogCost     = flag.Bool("perf.certlog", false, "run TestCertificateLogCost (needs the tlsplane and Envoy binaries)")
	certLogRate     = flag.Int("certlog.rate", 1000, "requests per second through Envoy to the TLS backend")
	certLogDuration = flag.Duration("certlog.duration", 30*time.Second, "how long each measurement sends requests")
	certLogRepeat   = flag.Int("certlog.repeat", 3, "rounds, each measuring every sample rate at once")
	certLogSamples  = flag.String("certlog.samples", "0,1,100", "--backend-certificate-sample values measured (0: the access log off)")
)

// TestCertificateLogCost measures what the backend certificate log costs
// Envoy: tlsplane serve --dir with one Gateway (an HTTP listener, an
// HTTPRoute to a Service a BackendTLSPolicy targets, its endpoint a real
// TLS backend on loopback), one real Envoy of that Gateway, and requests
// at -certlog.rate over keep-alive connections for -certlog.duration. Each
// round runs one tlsplane and Envoy per sample rate in -certlog.samples,
// loaded at the same time (the machine's other work weighs on each
// alike); -certlog.repeat rounds. Envoy's CPU time comes from
// /proc/PID/stat before and after the load. It reports; it asserts only
// that the load was served and that, with the log on, sightings reached
// tlsplane.
func TestCertificateLogCost(t *testing.T) {
	if !*certLogCost {
		t.Skip("a measurement: run with -perf.certlog")
	}
	tlsplaneBin, envoyBin := measuredBinaries(t)
	var samples []string
	for _, s := range strings.Split(*certLogSamples, ",") {
		if s = strings.TrimSpace(s); s != "" {
			samples = append(samples, s)
		}
	}
	backend := startCertLogBackend(t)
	// By position in -certlog.samples: a rate given twice (0,0,1) measures
	// the noise between two identical Envoys.
	results := make([][]certLogRun, len(samples))
	for r := range *certLogRepeat {
		runs := measureCertLogs(t, tlsplaneBin, envoyBin, backend, samples, r)
		for i, sample := range samples {
			t.Logf("round %d, sample %s%%: %s; %+.2f%% against sample %s%% in the round", r+1, sample, runs[i],
				100*(runs[i].cpuPercent()-runs[0].cpuPercent())/runs[0].cpuPercent(), samples[0])
			results[i] = append(results[i], runs[i])
		}
	}
	base := meanCPU(results[0])
	for i, sample := range samples {
		m := meanCPU(results[i])
		t.Logf("sample %s%%: Envoy CPU %.2f%% of a core (mean of %d), %+.2f%% against sample %s%%",
			sample, m, len(results[i]), 100*(m-base)/base, samples[0])
	}
}

// certLogRun is one measurement.
type certLogRun struct {
	requests, failures int
	wall, cpu          time.Duration
	sightings          float64
}

func (r certLogRun) cpuPercent() float64 { return 100 * r.cpu.Seconds() / r.wall.Seconds() }

func (r certLogRun) String() string {
	return fmt.Sprintf("%d requests (%d failed) in %s, Envoy CPU %s = %.2f%% of a core, %.1f µs a request, %v sightings at tlsplane",
		r.requests, r.failures, r.wall.Round(time.Millisecond), r.cpu, r.cpuPercent(),
		float64(r.cpu.Microseconds())/float64(max(r.requests, 1)), r.sightings)
}

func meanCPU(runs []certLogRun) float64 {
	var sum float64
	for _, r := range runs {
		sum += r.cpuPercent()
	}
	return sum / float64(max(len(runs), 1))
}

// certLogBackend is a TLS server on loopback answering every request, and
// the CA that issued its certificate.
type certLogBackend struct {
	port  int
	caPEM []byte
}

func startCertLogBackend(t *testing.T) certLogBackend {
	t.Helper()
	ca := harness.NewAuthority(t, "certlog-ca")
	leaf := ca.Issue(t, harness.LeafSpec{CommonName: "web.shop.test", DNSNames: []string{"web.shop.test"}})
	pair, err := tls.X509KeyPair(leaf.CertPEM, leaf.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") }),
		ReadHeaderTimeout: 5 * time.Second,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{pair}, NextProtos: []string{"http/1.1"}},
	}
	go srv.Serve(tls.NewListener(lis, srv.TLSConfig))
	t.Cleanup(func() { srv.Close() })
	return certLogBackend{port: lis.Addr().(*net.TCPAddr).Port, caPEM: ca.PEM}
}

// certLogManifests is the Gateway shop/edge listening on port, its route
// to Service web, the policy and the CA.
func certLogManifests(b certLogBackend, port int) string {
	ca := "    " + strings.ReplaceAll(strings.TrimSpace(string(b.caPEM)), "\n", "\n    ")
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane}
spec: {controllerName: tlsplane.io/controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: shop, name: edge}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: http, protocol: HTTP, port: %[1]d}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: shop, name: web}
spec:
  parentRefs: [{name: edge}]
  rules: [{backendRefs: [{name: web, port: 8443}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {namespace: shop, name: web}
spec:
  targetRefs: [{group: "", kind: Service, name: web}]
  validation:
    hostname: web.shop.test
    caCertificateRefs: [{group: "", kind: ConfigMap, name: web-ca}]
---
apiVersion: v1
kind: ConfigMap
metadata: {namespace: shop, name: web-ca}
data:
  ca.crt: |
%[2]s
---
apiVersion: v1
kind: Service
metadata: {namespace: shop, name: web}
spec:
  ports: [{name: https, port: 8443, targetPort: %[3]d, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: shop, name: web-1, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: https, port: %[3]d, protocol: TCP}]
endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}}]
`, port, ca, b.port)
}

// certLogSetup is one sample rate's tlsplane and Envoy, serving.
type certLogSetup struct {
	sample string
	tp     *harness.TLSPlane
	envoy  *harness.Envoy
	client *http.Client
	url    string
}

// startCertLog starts tlsplane with --backend-certificate-sample sample
// and an Envoy of the Gateway, and waits until Envoy serves the route.
func startCertLog(t *testing.T, tlsplaneBin, envoyBin string, b certLogBackend, sample, name string) *certLogSetup {
	t.Helper()
	dir := t.TempDir()
	manifests := filepath.Join(dir, "manifests")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	port := harness.FreePort(t)
	harness.WriteAtomic(t, filepath.Join(manifests, "gateway.yaml"), []byte(certLogManifests(b, port)))
	s := &certLogSetup{sample: sample, url: "http://127.0.0.1:" + strconv.Itoa(port) + "/",
		client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16, MaxConnsPerHost: 16}}}
	s.tp = harness.StartTLSPlane(t, harness.TLSPlaneOptions{Bin: tlsplaneBin, LogDir: dir, Name: "tlsplane-" + name,
		Args: []string{"--dir", manifests, "--backend-certificate-sample", sample, "--log-level", "warn"}})
	s.envoy = harness.StartEnvoy(t, harness.EnvoyOptions{Bin: envoyBin, LogDir: dir, Name: "envoy-" + name,
		NodeID: "certlog", Fleet: "shop/edge", XDSAddress: s.tp.XDSAddress(), GatewayListeners: true})
	if err := harness.Eventually(30*time.Second, 100*time.Millisecond, func() error { return certLogGet(s.client, s.url) }); err != nil {
		t.Fatalf("Envoy never served %s: %v", s.url, err)
	}
	return s
}

func (s *certLogSetup) stop() {
	s.client.CloseIdleConnections()
	s.envoy.Stop(5 * time.Second)
	s.tp.Stop(5 * time.Second)
}

// measureCertLogs starts every sample rate's setup, warms them up, then
// loads them all at once, so that what else the machine runs weighs on
// each alike, and reads each Envoy's CPU time around the load.
func measureCertLogs(t *testing.T, tlsplaneBin, envoyBin string, b certLogBackend, samples []string, round int) []certLogRun {
	t.Helper()
	setups := make([]*certLogSetup, len(samples))
	for i, sample := range samples {
		setups[i] = startCertLog(t, tlsplaneBin, envoyBin, b, sample, fmt.Sprintf("%s-%d", sample, round))
		defer setups[i].stop()
	}
	runs := make([]certLogRun, len(setups))
	var wg sync.WaitGroup
	for i, s := range setups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			certLogLoad(s.client, s.url, *certLogRate, 2*time.Second) // warm up: connections, first sightings
			before := processCPU(t, s.envoy.PID())
			start := time.Now()
			requests, failures := certLogLoad(s.client, s.url, *certLogRate, *certLogDuration)
			runs[i] = certLogRun{requests: requests, failures: failures, wall: time.Since(start), cpu: processCPU(t, s.envoy.PID()) - before}
		}()
	}
	wg.Wait()
	time.Sleep(1500 * time.Millisecond) // Envoy flushes its access log buffer every second
	for i, s := range setups {
		runs[i].sightings = metricValue(t, s.tp.AdminURL("/metrics"), "tlsplane_xds_certificate_sightings_total")
		if runs[i].failures > runs[i].requests/100 {
			t.Errorf("sample %s%%: %d of %d requests failed", s.sample, runs[i].failures, runs[i].requests)
		}
		// A rate that expects a few dozen sightings must see some.
		if p, _ := strconv.ParseFloat(s.sample, 64); p*float64(runs[i].requests)/100 >= 20 && runs[i].sightings == 0 {
			t.Errorf("sample %s%%: no sighting reached tlsplane", s.sample)
		}
	}
	return runs
}

func certLogGet(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s", resp.Status)
	}
	return nil
}

// certLogLoad sends rate requests a second for d, each started on its schedule
// by one of 16 workers (keep-alive connections); a request whose worker is
// late is sent late, never dropped. Bounded: rate*d requests, d+10s.
func certLogLoad(client *http.Client, url string, rate int, d time.Duration) (requests, failures int) {
	total := int(float64(rate) * d.Seconds())
	ctx, cancel := context.WithTimeout(context.Background(), d+10*time.Second)
	defer cancel()
	slots := make(chan struct{}, 64)
	var failed atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range slots {
				if certLogGet(client, url) != nil {
					failed.Add(1)
				}
			}
		}()
	}
	start := time.Now()
	interval := time.Second / time.Duration(rate)
	for i := range total {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		select {
		case slots <- struct{}{}:
			requests++
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(slots)
	wg.Wait()
	return requests, int(failed.Load())
}

// processCPU is a process's user and system CPU time so far.
func processCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command (which may hold spaces) in parentheses:
	// state is field 3, utime 14, stime 15.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: %q", pid, s)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// metricValue is the value of an unlabelled series on a Prometheus page,
// 0 when absent.
func metricValue(t *testing.T, url, name string) float64 {
	t.Helper()
	body, err := harness.HTTPGet(url)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}
