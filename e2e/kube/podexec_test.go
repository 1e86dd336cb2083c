package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	"sigs.k8s.io/gateway-api/conformance/utils/echo"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// execRun is one pods/exec: the command's output and how it ended.
type execRun struct {
	stdout, stderr string
	err            error
}

// exitCode is the command's exit code as the API server reported it; -1
// when the exec failed otherwise (err then says why).
func (r execRun) exitCode() int {
	var exit utilexec.CodeExitError
	switch {
	case r.err == nil:
		return 0
	case errors.As(r.err, &exit):
		return exit.Code
	}
	return -1
}

// podExec runs cmd in container ctr of a Pod through the API server's
// pods/exec, as the conformance suite's mesh client does
// (conformance/utils/echo, MeshPod.request), over SPDY or WebSocket.
func podExec(t *testing.T, c clients, protocol, ns, pod, ctr string, stdin string, cmd ...string) execRun {
	t.Helper()
	req := c.kube.CoreV1().RESTClient().Post().Resource("pods").Name(pod).Namespace(ns).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: ctr, Command: cmd, Stdin: stdin != "", Stdout: true, Stderr: true}, scheme.ParameterCodec)
	var executor remotecommand.Executor
	var err error
	switch protocol {
	case "SPDY":
		executor, err = remotecommand.NewSPDYExecutor(api.Config, "POST", req.URL())
	case "WebSocket":
		executor, err = remotecommand.NewWebSocketExecutor(api.Config, "GET", req.URL().String())
	default:
		t.Fatalf("no exec protocol %q", protocol)
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	opts := remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr}
	if stdin != "" {
		opts.Stdin = strings.NewReader(stdin)
	}
	err = executor.StreamWithContext(ctx, opts)
	return execRun{stdout.String(), stderr.String(), err}
}

// echoClientBin builds the echo-advanced image's client (e2e/echoclient)
// into dir.
func echoClientBin(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "client")
	cmd := exec.Command("go", "build", "-o", bin, "./echoclient/client")
	cmd.Dir = filepath.Join(harness.RepoRoot(), "e2e")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./echoclient/client: %v\n%s", err, out)
	}
	return bin
}

// nodeEchoServer answers, on the Node's address (the host side of the
// Pods' bridge), as the echo-advanced server does (Field=value lines),
// with the caller's address as IP.
func nodeEchoServer(t *testing.T, nodeIP string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(nodeIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip, _, _ := net.SplitHostPort(r.RemoteAddr)
		fmt.Fprintf(w, "ServiceVersion=v1\nStatusCode=200\nHost=%s\nURL=%s\nMethod=%s\nProto=%s\nIP=%s\n", r.Host, r.RequestURI, r.Method, r.Proto, ip)
		names := make([]string, 0, len(r.Header))
		for name := range r.Header {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			for _, v := range r.Header[name] {
				fmt.Fprintf(w, "RequestHeader=%s:%s\n", name, v)
			}
		}
		fmt.Fprint(w, "Hostname=node-echo\n")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// nodeGRPCEchoServer answers the echo-advanced server's gRPC
// EchoTestService/Echo on the Node's address, the caller's address as IP.
func nodeGRPCEchoServer(t *testing.T, nodeIP string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(nodeIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ForceServerCodec(wireCodec{}), grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		var req []byte
		if err := stream.RecvMsg(&req); err != nil {
			return err
		}
		if method, _ := grpc.MethodFromServerStream(stream); method != "/proto.EchoTestService/Echo" {
			return status.Errorf(codes.Unimplemented, "no method %s", method)
		}
		ip := ""
		if p, ok := peer.FromContext(stream.Context()); ok {
			ip, _, _ = net.SplitHostPort(p.Addr.String())
		}
		body := fmt.Sprintf("ServiceVersion=v1\nStatusCode=200\nIP=%s\nHostname=node-grpc-echo\n", ip)
		resp := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), body) // EchoResponse.message
		return stream.SendMsg(&resp)
	}))
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	return ln.Addr().String()
}

// wireCodec passes messages as their wire bytes.
type wireCodec struct{}

func (wireCodec) Name() string { return "proto" }
func (wireCodec) Marshal(v any) ([]byte, error) {
	if b, ok := v.(*[]byte); ok {
		return *b, nil
	}
	return nil, fmt.Errorf("wire codec: %T", v)
}
func (wireCodec) Unmarshal(data []byte, v any) error {
	b, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("wire codec: %T", v)
	}
	*b = append((*b)[:0], data...)
	return nil
}

// TestPodExecRunsEchoClient (issue 39): `kubectl exec` through the real
// API server reaches the node agent's kubelet endpoint, over SPDY (what
// the conformance suite's mesh client uses) and WebSocket (kubectl's
// default), and runs the echo-advanced client in the Pod's network
// namespace: its requests leave from the Pod's address, reach the Pod's
// own loopback, and its output, read by the suite's parser, says what
// the server saw. Exit codes come back as the API server reports them; a
// command the image does not have fails naming it.
func TestPodExecRunsEchoClient(t *testing.T) {
	c := adminClients(t)
	agent := startNodeAgent(t, c)
	clientBin := echoClientBin(t, t.TempDir())
	agent.AllowCommand(tlsplaneImage, "client", clientBin)
	agent.AllowCommand(tlsplaneImage, "sh", "/bin/sh")
	ns := newNamespace(t, c)
	ctx := context.Background()
	if _, err := c.kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tlsplane-manifests"},
		Data: statusPodManifests(t)}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := runPod(t, c, tlsplanePod(ns, "echo-caller", tlsplaneImage+":e2e"))
	server := nodeEchoServer(t, pod.Status.HostIP)
	grpcServer := nodeGRPCEchoServer(t, pod.Status.HostIP)

	for _, protocol := range []string{"SPDY", "WebSocket"} {
		t.Run(protocol, func(t *testing.T) {
			inPod := func(stdin string, cmd ...string) execRun {
				t.Helper()
				return podExec(t, c, protocol, ns, pod.Name, "tlsplane", stdin, cmd...)
			}

			// The suite's request: URL, --method=, -H name:value.
			run := inPod("", "client", "http://"+server+"/mesh/path?q=1", "--method=GET", "-H", "X-Mesh-Test:"+protocol, "-H", "Host:echo")
			if run.err != nil {
				t.Fatalf("client: %v\nstdout:\n%s\nstderr:\n%s", run.err, run.stdout, run.stderr)
			}
			resp := echo.ParseResponse(run.stdout)
			if resp.Code != "200" || resp.Hostname != "node-echo" || resp.Host != "echo" || resp.URL != "/mesh/path?q=1" || resp.Method != "GET" {
				t.Fatalf("parsed %s\nfrom:\n%s", resp, run.stdout)
			}
			if resp.IP != pod.Status.PodIP {
				t.Fatalf("the server saw the request from %s, want the Pod's address %s (sent from the Pod's namespace)", resp.IP, pod.Status.PodIP)
			}
			if got := resp.RequestHeaders.Get("X-Mesh-Test"); got != protocol {
				t.Fatalf("request header X-Mesh-Test %q, want %q:\n%s", got, protocol, run.stdout)
			}

			// gRPC, as the suite's MESH-GRPC requests: grpc://host:port.
			run = inPod("", "client", "grpc://"+grpcServer)
			if r := echo.ParseResponse(run.stdout); run.err != nil || r.Code != "200" || r.Hostname != "node-grpc-echo" || r.IP != pod.Status.PodIP {
				t.Fatalf("gRPC: %v: parsed %s (want the Pod's address %s as IP)\nfrom:\n%s", run.err, r, pod.Status.PodIP, run.stdout)
			}

			// The Pod's loopback is its own: tlsplane's admin there serves
			// /debug/status to loopback callers only, and it names the
			// Pod's payments policy.
			eventually(t, 30*time.Second, "tlsplane's admin on the Pod's loopback", func() error {
				run := inPod("", "client", "http://127.0.0.1:19000/debug/status")
				if run.err != nil {
					return fmt.Errorf("%v: %s", run.err, run.stdout)
				}
				if r := echo.ParseResponse(run.stdout); r.Code != "200" || !strings.Contains(run.stdout, "payments") {
					return fmt.Errorf("code %q:\n%s", r.Code, run.stdout)
				}
				return nil
			})

			// --count=N: N responses, as the suite's RequestBatch splits them.
			run = inPod("", "client", "http://"+server+"/", "--count=3")
			if run.err != nil || strings.Count(run.stdout, "StatusCode=200\n") != 6 || strings.Count(run.stdout, "\n\n") != 3 {
				t.Fatalf("--count=3: %v\n%s", run.err, run.stdout)
			}

			closed, err := net.Listen("tcp", net.JoinHostPort(pod.Status.HostIP, "0"))
			if err != nil {
				t.Fatal(err)
			}
			refused := closed.Addr().String()
			closed.Close()
			for _, tc := range []struct {
				name   string
				stdin  string
				cmd    []string
				exit   int    // -1: no exit code, the exec failed
				stdout string // in stdout
				err    string // in the error
			}{
				{name: "a request that fails", cmd: []string{"client", "http://" + refused + "/"}, exit: 1,
					stdout: "\tfatal\tError 1/1 requests had errors", err: "command terminated with exit code 1"},
				{name: "a bad command line", cmd: []string{"client"}, exit: 255},
				{name: "a shell's exit code", cmd: []string{"sh", "-c", "echo bye; exit 7"}, exit: 7, stdout: "bye\n"},
				{name: "stdin", stdin: "from the client\n", cmd: []string{"sh", "-c", "read line; echo got: $line"}, stdout: "got: from the client\n"},
				{name: "a command the image does not have", cmd: []string{"curl", "http://echo"}, exit: -1,
					err: `command "curl" is not one the node agent can run in image ` + tlsplaneImage + ` (its commands: client, sh)`},
			} {
				got := inPod(tc.stdin, tc.cmd...)
				if got.exitCode() != tc.exit || !strings.Contains(got.stdout, tc.stdout) || (tc.err != "" && (got.err == nil || !strings.Contains(got.err.Error(), tc.err))) {
					t.Errorf("%s: exit %d, err %v, stdout %q, stderr %q; want exit %d, stdout with %q, error with %q",
						tc.name, got.exitCode(), got.err, got.stdout, got.stderr, tc.exit, tc.stdout, tc.err)
				}
			}
		})
	}
}
