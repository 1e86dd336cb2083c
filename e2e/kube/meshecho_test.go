package kube

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/gateway-api/conformance"
	"sigs.k8s.io/gateway-api/conformance/utils/config"
	"sigs.k8s.io/gateway-api/conformance/utils/echo"
	gwhttp "sigs.k8s.io/gateway-api/conformance/utils/http"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
	"github.com/tlsplane/tlsplane/e2e/harness"
	"github.com/tlsplane/tlsplane/e2e/node"
)

// The mesh manifests' namespaces (conformance/mesh/manifests.yaml).
const (
	meshNamespace         = "gateway-conformance-mesh"
	meshConsumerNamespace = "gateway-conformance-mesh-consumer"
)

// echoServerBin builds the echo-advanced image's server (e2e/echoserver)
// into dir.
func echoServerBin(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "echo-advanced")
	cmd := exec.Command("go", "build", "-o", bin, "./echoserver/server")
	cmd.Dir = filepath.Join(harness.RepoRoot(), "e2e")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./echoserver/server: %v\n%s", err, out)
	}
	return bin
}

// TestMeshEchoPods (issue 39): the conformance suite's own mesh manifests,
// unmodified, applied to the real API server beside the real
// kube-controller-manager, become echo Pods the node agent runs as the
// echo-advanced server, Ready; the image's client exec'd in echo-v1
// through pods/exec reaches echo-v2's Pod over HTTP/1.1, h2c, HTTPS and
// gRPC, and what it prints, read by the suite's echo.ParseResponse, is
// echo-v2's: its Pod name as Hostname, its port, the request's header
// and path, the caller's Pod address. The suite's own MeshPod request
// (ConnectToApp, MakeRequestAndExpectEventuallyConsistentResponse) passes
// against the Pod's address. No mesh yet: no Service address, no
// sidecar, no capture, no DNS.
func TestMeshEchoPods(t *testing.T) {
	kcm, err := api.StartControllerManager(apiserver.ClusterControllers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kcm.Stop)
	c := adminClients(t)
	dir := t.TempDir()
	agent := startNodeAgentWith(t, c, node.Images{node.EchoAdvancedImage: echoServerBin(t, dir)})
	agent.AllowCommand(node.EchoAdvancedImage, "client", echoClientBin(t, dir))

	manifest, err := fs.ReadFile(conformance.Manifests, "mesh/manifests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t.Cleanup(func() { deleteNamespaces(t, c, meshNamespace, meshConsumerNamespace) })
	if _, err := apiserver.Apply(ctx, api.Config, manifest, false); err != nil {
		t.Fatalf("apply the suite's mesh/manifests.yaml: %v", err)
	}

	pods := map[string]corev1.Pod{} // namespace/Deployment: its one Pod, Ready
	eventually(t, 90*time.Second, "the mesh manifests' echo Pods Running and Ready", func() error {
		for _, want := range []struct{ ns, version string }{{meshNamespace, "v1"}, {meshNamespace, "v2"}, {meshConsumerNamespace, "v1"}} {
			list, err := c.kube.CoreV1().Pods(want.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=echo,version=" + want.version})
			if err != nil {
				return err
			}
			if len(list.Items) != 1 {
				return fmt.Errorf("%s: %d Pods of echo-%s, want 1", want.ns, len(list.Items), want.version)
			}
			p := list.Items[0]
			if p.Status.Phase != corev1.PodRunning || !podReady(&p) || p.Status.PodIP == "" {
				return fmt.Errorf("Pod %s/%s: phase %q, ready %v, IP %q; conditions %+v", p.Namespace, p.Name, p.Status.Phase, podReady(&p), p.Status.PodIP, p.Status.Conditions)
			}
			pods[want.ns+"/echo-"+want.version] = p
		}
		return nil
	})
	// Again, now that their processes run: this cleanup goes before the
	// harness stops them, so the agent stops them rather than restarting
	// one the harness killed.
	t.Cleanup(func() { deleteNamespaces(t, c, meshNamespace, meshConsumerNamespace) })
	v1, v2, consumer := pods[meshNamespace+"/echo-v1"], pods[meshNamespace+"/echo-v2"], pods[meshConsumerNamespace+"/echo-v1"]
	t.Logf("echo-v1 %s at %s, echo-v2 %s at %s, consumer echo-v1 %s at %s", v1.Name, v1.Status.PodIP, v2.Name, v2.Status.PodIP, consumer.Name, consumer.Status.PodIP)

	// The manifests' ports: --port=8080 and --port=8443 with --tls=8443,
	// --grpc=7070; the consumer's echo-v1 has no args, the defaults 8080
	// and 7070. The Pods' addresses, not the Services' (no proxy here).
	at := func(p corev1.Pod, port int) string { return net.JoinHostPort(p.Status.PodIP, fmt.Sprint(port)) }
	for _, tc := range []struct {
		name             string
		from, to         corev1.Pod
		cmd              []string
		proto, port, url string
		alpn             string
		header           bool
	}{
		{name: "HTTP/1.1", from: v1, to: v2, cmd: []string{"client", "http://" + at(v2, 8080) + "/path?x=1", "--method=GET", "-H", "foo:bar"},
			proto: "HTTP/1.1", port: "8080", url: "/path?x=1", header: true},
		{name: "h2c", from: v1, to: v2, cmd: []string{"client", "http://" + at(v2, 8080) + "/h2c", "--http2", "-H", "foo:bar"},
			proto: "HTTP/2.0", port: "8080", url: "/h2c", header: true},
		{name: "HTTPS on the --tls port, with the image's own key pair made in its absence", from: v1, to: v2,
			cmd: []string{"client", "https://" + at(v2, 8443) + "/tls", "-H", "foo:bar"}, proto: "HTTP/1.1", port: "8443", url: "/tls", alpn: "http/1.1", header: true},
		{name: "gRPC Echo", from: v1, to: v2, cmd: []string{"client", "grpc://" + at(v2, 7070), "-H", "foo:bar"},
			proto: "GRPC", port: "7070", header: true},
		{name: "the consumer's echo-v1, on its default ports, to echo-v2", from: consumer, to: v2, cmd: []string{"client", "http://" + at(v2, 8080) + "/"},
			proto: "HTTP/1.1", port: "8080", url: "/"},
		{name: "to the consumer's echo-v1, on its default gRPC port", from: v1, to: consumer, cmd: []string{"client", "grpc://" + at(consumer, 7070)},
			proto: "GRPC", port: "7070"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := podExec(t, c, "SPDY", tc.from.Namespace, tc.from.Name, "echo", "", tc.cmd...)
			if run.err != nil {
				t.Fatalf("%v: %v\nstdout:\n%s\nstderr:\n%s", tc.cmd, run.err, run.stdout, run.stderr)
			}
			r := echo.ParseResponse(run.stdout)
			for _, f := range []struct{ field, got, want string }{
				{"StatusCode", r.Code, "200"}, {"Hostname", r.Hostname, tc.to.Name},
				// The manifests give no --version: the original writes it empty.
				{"ServiceVersion", r.Version, ""},
				{"ServicePort", r.Port, tc.port}, {"Proto", r.Protocol, tc.proto}, {"URL", r.URL, tc.url}, {"Alpn", r.Alpn, tc.alpn},
				{"IP (the caller's Pod)", r.IP, tc.from.Status.PodIP},
			} {
				if f.got != f.want {
					t.Errorf("%s %q, want %q", f.field, f.got, f.want)
				}
			}
			if got := r.RequestHeaders.Get("foo"); tc.header && got != "bar" {
				t.Errorf("request header foo %q, want bar", got)
			}
			if t.Failed() {
				t.Logf("client output:\n%s", run.stdout)
			}
		})
	}

	t.Run("the suite's own MeshPod request", func(t *testing.T) {
		cl, err := client.New(api.Config, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := &suite.ConformanceTestSuite{Client: cl, Clientset: c.kube, RestConfig: api.Config}
		from := echo.ConnectToApp(t, s, echo.MeshAppEchoV1)
		if from.Name != v1.Name {
			t.Fatalf("ConnectToApp found %s, want echo-v1's Pod %s", from.Name, v1.Name)
		}
		timeouts := config.DefaultTimeoutConfig()
		from.MakeRequestAndExpectEventuallyConsistentResponse(t, gwhttp.ExpectedResponse{
			Request:         gwhttp.Request{Host: at(v2, 8080), Path: "/v2/example", Headers: map[string]string{"Version": "two"}},
			ExpectedRequest: &gwhttp.ExpectedRequest{Request: gwhttp.Request{Headers: map[string]string{"Version": "two"}}},
			Response:        gwhttp.Response{StatusCode: 200},
			Backend:         "echo-v2",
		}, timeouts)
		from.MakeRequestAndExpectEventuallyConsistentResponse(t, gwhttp.ExpectedResponse{
			Request:  gwhttp.Request{Host: at(v2, 7070), Protocol: "grpc"},
			Response: gwhttp.Response{StatusCode: 200},
			Backend:  "echo-v2",
		}, timeouts)
	})
}

// podReady says whether the Pod's Ready condition is True.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// deleteNamespaces deletes namespaces and waits (bounded) until they are
// gone: the namespace controller deletes their Pods, which the agent
// stops, before the agent and the controller-manager go.
func deleteNamespaces(t *testing.T, c clients, names ...string) {
	ctx := context.Background()
	for _, ns := range names {
		if err := c.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete namespace %s: %v", ns, err)
		}
	}
	deadline := time.Now().Add(90 * time.Second)
	for _, ns := range names {
		for {
			_, err := c.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("namespace %s still there 90s after its deletion (%v)", ns, err)
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}
