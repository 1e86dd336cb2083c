package echoserver

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"sigs.k8s.io/gateway-api/conformance/utils/echo"

	"github.com/tlsplane/tlsplane/e2e/echoclient"
)

// startServer runs a server on loopback: HTTP, HTTPS, gRPC and TCP, each
// on a free port, as the mesh manifests' Pods run it (their --tls port
// with the image's --crt and --key, absent here).
func startServer(t *testing.T, cfg Config) map[string]Endpoint {
	t.Helper()
	if cfg.Ports == nil {
		cfg.Ports = []Port{
			{Name: "http-0", Protocol: HTTP},
			{Name: "http-1", Protocol: HTTP, TLS: true},
			{Name: "grpc-0", Protocol: GRPC},
			{Name: "tcp-0", Protocol: TCP},
		}
		cfg.CertFile, cfg.KeyFile = imageCertFile, imageKeyFile
	}
	for i := range cfg.Ports {
		cfg.Ports[i].ListenIP = "127.0.0.1"
	}
	s, err := Start(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	byName := map[string]Endpoint{}
	for _, e := range s.Endpoints() {
		byName[e.Name] = e
	}
	return byName
}

// client runs the image's client (package echoclient) with args and
// parses its output with the suite's own parser.
func client(t *testing.T, args ...string) (echo.Response, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := echoclient.Main(args, &out, &errOut); code != 0 {
		t.Fatalf("client %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out.String(), errOut.String())
	}
	return echo.ParseResponse(out.String()), out.String()
}

// TestResponsesParsedBySuite: what the server answers on each endpoint,
// as the suite's mesh tests read it through the image's client: status,
// ServiceVersion, ServicePort, Host, URL, Method, Proto, Alpn, the
// caller's IP, the request headers and Hostname (the Pod's name, from
// HOSTNAME).
func TestResponsesParsedBySuite(t *testing.T) {
	t.Setenv("HOSTNAME", "echo-v2-5d8f7c6b9-x2k4q")
	ep := startServer(t, Config{Version: "v2", Cluster: "cluster-1", Hostname: hostname()})
	port := func(name string) string { return strconv.Itoa(ep[name].Port.Port) }
	for _, tc := range []struct {
		name          string
		args          []string
		code, proto   string
		port, host    string
		url, method   string
		alpn          string
		headers       map[string]string // request headers echoed
		respHeaders   map[string]string // response headers the client saw
		rawContains   []string
		rawNotContain []string
	}{
		{name: "HTTP/1.1, the suite's request", args: []string{"http://" + ep["http-0"].Addr + "/v2/a?x=1", "--method=GET", "-H", "foo:bar", "-H", "Host:echo"},
			code: "200", proto: "HTTP/1.1", port: port("http-0"), host: "echo", url: "/v2/a?x=1", method: "GET",
			headers:       map[string]string{"Foo": "bar", "User-Agent": "Go-http-client/1.1"},
			respHeaders:   map[string]string{"Content-Type": "text/plain; charset=utf-8"},
			rawContains:   []string{"[0 body] ServiceVersion=v2\n[0 body] ServicePort=" + port("http-0") + "\n[0 body] Host=echo\n[0 body] URL=/v2/a?x=1\n[0 body] Cluster=cluster-1\n[0 body] Method=GET\n[0 body] Proto=HTTP/1.1\n[0 body] IP=127.0.0.1\n"},
			rawNotContain: []string{"Alpn=", "Namespace="}},
		{name: "a path Go would clean, sent and echoed as written", args: []string{"http://" + ep["http-0"].Addr + "/a/../b//c?animal=whale&color=blue"},
			code: "200", proto: "HTTP/1.1", port: port("http-0"), host: ep["http-0"].Addr, url: "/a/../b//c?animal=whale&color=blue", method: "GET"},
		{name: "a method", args: []string{"http://" + ep["http-0"].Addr + "/", "--method=POST"},
			code: "200", proto: "HTTP/1.1", port: port("http-0"), host: ep["http-0"].Addr, url: "/", method: "POST"},
		{name: "h2c with prior knowledge", args: []string{"http://" + ep["http-0"].Addr + "/h2c", "--http2", "-H", "foo:bar"},
			code: "200", proto: "HTTP/2.0", port: port("http-0"), host: ep["http-0"].Addr, url: "/h2c", method: "GET", headers: map[string]string{"Foo": "bar"}},
		{name: "HTTPS, HTTP/1.1", args: []string{"https://" + ep["http-1"].Addr + "/tls"},
			code: "200", proto: "HTTP/1.1", port: port("http-1"), host: ep["http-1"].Addr, url: "/tls", method: "GET", alpn: "http/1.1"},
		{name: "HTTPS, h2", args: []string{"https://" + ep["http-1"].Addr + "/tls", "--http2"},
			code: "200", proto: "HTTP/2.0", port: port("http-1"), host: ep["http-1"].Addr, url: "/tls", method: "GET", alpn: "h2"},
		{name: "?codes= picks the status", args: []string{"http://" + ep["http-0"].Addr + "/?codes=503"},
			code: "503", proto: "HTTP/1.1", port: port("http-0"), host: ep["http-0"].Addr, url: "/?codes=503", method: "GET"},
		{name: "?headers= sets response headers as written", args: []string{"http://" + ep["http-0"].Addr + "/?headers=x-set:yes,X-Other:2"},
			code: "200", proto: "HTTP/1.1", port: port("http-0"), host: ep["http-0"].Addr, url: "/?headers=x-set:yes,X-Other:2", method: "GET",
			respHeaders: map[string]string{"x-set": "yes", "X-Other": "2"}},
		{name: "a bad ?codes= is a 200 saying so, with the Content-Type set", args: []string{"http://" + ep["http-0"].Addr + "/?codes=99"},
			code: "200", proto: "HTTP/1.1", port: port("http-0"), host: ep["http-0"].Addr, url: "/?codes=99", method: "GET",
			respHeaders: map[string]string{"Content-Type": "application/text"},
			rawContains: []string{"[0 body] codes error: invalid HTTP response code 99\n"}},
		{name: "gRPC Echo", args: []string{"grpc://" + ep["grpc-0"].Addr, "-H", "foo:bar", "--msg", "ping"},
			code: "200", proto: "GRPC", port: port("grpc-0"), host: ep["grpc-0"].Addr,
			headers:     map[string]string{"Foo": "bar", "X-Request-Id": "0", "User-Agent": "grpc-go/" + grpc.Version},
			rawContains: []string{"[0 body] Echo=ping\n", "[0 body] RequestHeader=:authority:" + ep["grpc-0"].Addr + "\n", "[0 body] Cluster=cluster-1\n"}},
		{name: "gRPC Echo with an authority", args: []string{"grpc://" + ep["grpc-0"].Addr, "-H", "Host:echo"},
			code: "200", proto: "GRPC", port: port("grpc-0"), host: "echo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, raw := client(t, tc.args...)
			want := []struct{ field, got, want string }{
				{"StatusCode", r.Code, tc.code}, {"ServiceVersion", r.Version, "v2"}, {"ServicePort", r.Port, tc.port},
				{"Host", r.Host, tc.host}, {"URL", r.URL, tc.url}, {"Method", r.Method, tc.method}, {"Proto", r.Protocol, tc.proto},
				{"Alpn", r.Alpn, tc.alpn}, {"Hostname", r.Hostname, "echo-v2-5d8f7c6b9-x2k4q"}, {"IP", r.IP, "127.0.0.1"}, {"Cluster", r.Cluster, "cluster-1"},
			}
			for _, w := range want {
				if w.got != w.want {
					t.Errorf("%s %q, want %q", w.field, w.got, w.want)
				}
			}
			for k, v := range tc.headers {
				if got := r.RequestHeaders.Get(k); got != v {
					t.Errorf("request header %s %q, want %q", k, got, v)
				}
			}
			for k, v := range tc.respHeaders {
				if got := r.ResponseHeaders.Get(k); got != v {
					t.Errorf("response header %s %q, want %q", k, got, v)
				}
			}
			for _, s := range tc.rawContains {
				if !strings.Contains(raw, s) {
					t.Errorf("output lacks %q", s)
				}
			}
			for _, s := range tc.rawNotContain {
				if strings.Contains(raw, s) {
					t.Errorf("output has %q", s)
				}
			}
			if t.Failed() {
				t.Logf("client output:\n%s", raw)
			}
		})
	}
}

// TestCountAnswersEach: --count=N gives N responses the suite's batch
// parser splits (each with a Hostname), what its weight tests read.
func TestCountAnswersEach(t *testing.T) {
	ep := startServer(t, Config{Hostname: "echo-v1-abc"})
	_, raw := client(t, "http://"+ep["http-0"].Addr+"/", "--count=5")
	n := 0
	for section := range strings.SplitSeq(raw, "\n\n") {
		if r := echo.ParseResponse(strings.TrimSpace(section)); r.Hostname == "echo-v1-abc" && r.Code == "200" {
			n++
		}
	}
	if n != 5 {
		t.Fatalf("%d responses with Hostname and code 200, want 5:\n%s", n, raw)
	}
}

// TestServiceVersionEmptyWithoutFlag: no --version (the mesh manifests
// give none) writes an empty ServiceVersion, as the original does.
func TestServiceVersionEmptyWithoutFlag(t *testing.T) {
	ep := startServer(t, Config{Hostname: "h"})
	_, raw := client(t, "http://"+ep["http-0"].Addr+"/")
	if !strings.Contains(raw, "[0 body] ServiceVersion=\n") {
		t.Fatalf("want an empty ServiceVersion line:\n%s", raw)
	}
}

// TestH2CUpgradeRefused: an HTTP/1.1 Upgrade to h2c gets the original's
// 405 (only prior knowledge is served).
func TestH2CUpgradeRefused(t *testing.T) {
	ep := startServer(t, Config{Hostname: "h"})
	req, _ := http.NewRequest("GET", "http://"+ep["http-0"].Addr+"/", nil)
	req.Header.Set("Upgrade", "h2c")
	req.Header.Set("Connection", "Upgrade, HTTP2-Settings")
	req.Header.Set("HTTP2-Settings", "AAMAAABkAARAAAAAAAIAAAAA")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusMethodNotAllowed || string(body) != "h2c upgrade not allowed" {
		t.Fatalf("status %d body %q, want 405 %q", resp.StatusCode, body, "h2c upgrade not allowed")
	}
}

// TestGRPCHealthServing: the standard health service answers SERVING
// beside the echo service (the wire codec leaves generated messages to
// the proto codec).
func TestGRPCHealthServing(t *testing.T) {
	ep := startServer(t, Config{Hostname: "h"})
	conn, err := grpc.NewClient("passthrough:///"+ep["grpc-0"].Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health: %v %v, want SERVING", resp, err)
	}
	var out []byte
	err = conn.Invoke(ctx, "/proto.EchoTestService/ForwardEcho", &wireMessage{}, (*wireMessage)(&out), grpc.ForceCodecV2(wireOrProtoCodec{}))
	if err == nil || !strings.Contains(err.Error(), "ForwardEcho is not implemented") {
		t.Fatalf("ForwardEcho: %v, want it refused by name", err)
	}
}

// TestTCPEcho: the TCP endpoint writes its fields once the client has
// sent something, then echoes it; a server-first port writes the magic
// string before reading.
func TestTCPEcho(t *testing.T) {
	for _, serverFirst := range []bool{false, true} {
		t.Run("server-first="+strconv.FormatBool(serverFirst), func(t *testing.T) {
			ep := startServer(t, Config{Version: "v1", Hostname: "echo-v1-abc", Ports: []Port{{Name: "tcp-0", Protocol: TCP, ServerFirst: serverFirst}}})
			conn, err := net.DialTimeout("tcp", ep["tcp-0"].Addr, 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := conn.Write([]byte("hello\n")); err != nil {
				t.Fatal(err)
			}
			conn.(*net.TCPConn).CloseWrite()
			got, err := io.ReadAll(conn)
			if err != nil {
				t.Fatal(err)
			}
			want := "StatusCode=200\nServiceVersion=v1\nServicePort=" + strconv.Itoa(ep["tcp-0"].Port.Port) + "\nIP=127.0.0.1\nProto=TCP\nHostname=echo-v1-abc\nhello\n"
			if serverFirst {
				want = serverFirstMagic + want
			}
			if string(got) != want {
				t.Fatalf("got %q, want %q", got, want)
			}
			if r := echo.ParseResponse(string(got)); r.Hostname != "echo-v1-abc" || r.Code != "200" {
				t.Fatalf("parsed %s", r)
			}
		})
	}
}
