package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// trafficWait bounds how long Envoy may take to follow a change: the
// debounce, an xDS round trip, and Envoy's cluster warming.
const trafficWait = 30 * time.Second

// trafficEnv is one namespace of the API server, tlsplane serving it, a
// real Envoy fed by tlsplane, and backends in a network namespace.
type trafficEnv struct {
	t       *testing.T
	c       clients
	ns      string
	net     *backendNet
	bin     string // examples/backend
	envoy   *kubeEnvoy
	cp      *controlPlane
	backend map[string]*harness.Process
}

// startBackend runs examples/backend inside the network namespace on port,
// serving a certificate for dnsName issued by ca.
func (e *trafficEnv) startBackend(name string, port int, ca *harness.Authority, dnsName string) {
	t := e.t
	t.Helper()
	if old := e.backend[name]; old != nil {
		old.Kill()
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cert, key := issueServing(t, ca, dir, dnsName)
	b := startChild(t, "backend-"+name, "ip", "netns", "exec", e.net.name, e.bin,
		"--listen", e.net.backendIP+":"+strconv.Itoa(port), "--name", name, "--cert", cert, "--key", key)
	e.backend[name] = b
	eventually(t, 20*time.Second, "backend "+name+" listening", func() error {
		if !strings.Contains(b.Log(), "serving") {
			return fmt.Errorf("not yet: %s", b.Log())
		}
		return nil
	})
}

// backendService is Service name (port 443 → port) and its EndpointSlice
// holding the backend's namespace address.
func (e *trafficEnv) backendService(name string, port int) {
	t := e.t
	t.Helper()
	createService(t, e.c, e.ns, name, corev1.ServicePort{Name: "https", Port: 443, TargetPort: intstr.FromInt32(int32(port))})
	portName, p, ready := "https", int32(port), true
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: e.ns, Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{e.net.backendIP}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &p}},
	}
	if _, err := e.c.kube.DiscoveryV1().EndpointSlices(e.ns).Create(context.Background(), slice, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create EndpointSlice %s/%s: %v", e.ns, slice.Name, err)
	}
}

// expectSNI waits until a request to service's cluster is answered 200 by
// the backend and the backend saw sni.
func (e *trafficEnv) expectSNI(service, sni string) {
	t := e.t
	t.Helper()
	cluster := clusterName(e.ns, service, 443)
	eventually(t, trafficWait, fmt.Sprintf("GET via Envoy to %s: 200 with SNI %s", cluster, sni), func() error {
		r, err := e.envoy.Request(cluster, "/")
		if err != nil {
			return err
		}
		if r.Status != 200 {
			return fmt.Errorf("%d %s", r.Status, tail(r.Body, 200))
		}
		echo := r.Echo
		if echo.Name != service || echo.SNI != sni {
			return fmt.Errorf("answered by %q with SNI %q", echo.Name, echo.SNI)
		}
		return nil
	})
}

// TestKubeTraffic: Kubernetes mode end to end with a real Envoy and TLS
// backends in a network namespace — the happy path, a missing CA, the CA
// rotation and a conflict — with a SotW and with a delta Envoy.
func TestKubeTraffic(t *testing.T) {
	for _, api := range []struct{ apiType, lease string }{{"GRPC", "traffic-sotw"}, {"DELTA_GRPC", "traffic-delta"}} {
		t.Run(api.apiType, func(t *testing.T) { kubeTraffic(t, api.apiType, api.lease) })
	}
}

func kubeTraffic(t *testing.T, apiType, lease string) {
	bnet := newBackendNet(t)
	c := adminClients(t)
	e := &trafficEnv{t: t, c: c, ns: newNamespace(t, c), net: bnet, bin: harness.BackendBin(t, t.TempDir()), backend: map[string]*harness.Process{}}
	e.cp = startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags(lease), "--namespaces", e.ns)...)
	e.envoy = startEnvoy(t, e.cp.xds, "kube-envoy", "edge", apiType)
	ca1 := harness.NewAuthority(t, "traffic CA 1")
	parent := t

	// Happy path: 200 from the backend, which saw the policy's hostname.
	e.backendService("pay", 8443)
	e.startBackend("pay", 8443, ca1, "pay.example.com")
	createCAConfigMap(t, c, e.ns, "pay-ca", string(ca1.PEM))
	createPolicy(t, c, policy(e.ns, "pay", "pay", "", "pay-ca", "pay.example.com"))
	expectStatus(t, c, e.ns, "pay", acceptedTrue, resolvedTrue)
	e.expectSNI("pay", "pay.example.com")

	t.Run("missing CA", func(t *testing.T) {
		e.t = t
		defer func() { e.t = parent }()
		e.backendService("noca", 8444)
		e.startBackend("noca", 8444, ca1, "noca.example.com")
		createPolicy(t, c, policy(e.ns, "noca", "noca", "", "absent", "noca.example.com"))
		expectStatus(t, c, e.ns, "noca", cond{metav1.ConditionFalse, ""}, invalidCARef)
		cluster := clusterName(e.ns, "noca", 443)
		// The cluster is served, failing closed: Envoy answers, the backend sees nothing.
		eventually(t, trafficWait, "Envoy has cluster "+cluster, func() error {
			body, err := harness.HTTPGet(e.envoy.AdminURL("/clusters"))
			if err == nil && !strings.Contains(string(body), cluster+"::") {
				err = fmt.Errorf("not in /clusters")
			}
			return err
		})
		for range 3 {
			r, err := e.envoy.Request(cluster, "/")
			if err != nil {
				t.Fatal(err)
			}
			if r.Status < 500 {
				t.Fatalf("policy without CA: %d %s, want a 5xx", r.Status, tail(r.Body, 200))
			}
		}
		if log := e.backend["noca"].Log(); strings.Contains(log, ": request ") {
			t.Fatalf("the backend got a request through a policy without a CA:\n%s", tail(log, 1000))
		}
	})

	t.Run("CA rotation", func(t *testing.T) {
		e.t = t
		defer func() { e.t = parent }()
		modified := e.envoy.stat(t, "cluster_manager.cluster_modified")
		ca2 := harness.NewAuthority(t, "traffic CA 2")
		setCA(t, c, e.ns, "pay-ca", string(ca2.PEM))
		// The backend rolls to a certificate of the new CA (a restart, which
		// also closes Envoy's pooled connections: the next ones handshake anew).
		e.startBackend("pay", 8443, ca2, "pay.example.com")
		e.expectSNI("pay", "pay.example.com")
		if now := e.envoy.stat(t, "cluster_manager.cluster_modified"); now != modified {
			t.Errorf("cluster_manager.cluster_modified went from %d to %d on a CA rotation", modified, now)
		}
	})

	t.Run("conflict", func(t *testing.T) {
		e.t = t
		defer func() { e.t = parent }()
		e.backendService("dup", 8445)
		e.startBackend("dup", 8445, ca1, "winner.example.com")
		createCAConfigMap(t, c, e.ns, "dup-ca", string(ca1.PEM))
		createPolicy(t, c, policy(e.ns, "a-winner", "dup", "", "dup-ca", "winner.example.com"))
		expectStatus(t, c, e.ns, "a-winner", acceptedTrue, resolvedTrue)
		time.Sleep(1100 * time.Millisecond) // creationTimestamp has a 1 s resolution
		createPolicy(t, c, policy(e.ns, "b-loser", "dup", "", "dup-ca", "loser.example.com"))
		expectStatus(t, c, e.ns, "b-loser", conflicted, anyResolvedRefs)
		expectStatus(t, c, e.ns, "a-winner", acceptedTrue, resolvedTrue)
		e.expectSNI("dup", "winner.example.com")
	})
}
