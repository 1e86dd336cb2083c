package echoclient

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"sigs.k8s.io/gateway-api/conformance/utils/echo"

	"github.com/tlsplane/tlsplane/e2e/echowire"
)

// echoBody is what the echo-advanced server answers (Istio's echo server:
// one Field=value a line), for the fields the suite reads.
func echoBody(r *http.Request, hostname string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ServiceVersion=v1\nServicePort=8080\nStatusCode=200\nHost=%s\nURL=%s\nMethod=%s\nProto=%s\n", r.Host, r.RequestURI, r.Method, r.Proto)
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)
	fmt.Fprintf(&b, "IP=%s\n", ip)
	names := make([]string, 0, len(r.Header))
	for name := range r.Header {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, v := range r.Header[name] {
			fmt.Fprintf(&b, "RequestHeader=%s:%s\n", name, v)
		}
	}
	fmt.Fprintf(&b, "Hostname=%s\n", hostname)
	return b.String()
}

// echoServer answers as echo-advanced does, and with a redirect on
// /redirect, on 127.0.0.1.
func echoServer(t *testing.T, h2c bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			w.Header().Set("Location", "/landed")
			w.WriteHeader(http.StatusFound)
			return
		}
		w.Header().Set("X-Served-By", "echo-v1")
		fmt.Fprint(w, echoBody(r, "echo-v1-7d9f"))
	}))
	if h2c {
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

type result struct {
	code           int
	stdout, stderr string
}

func runClient(args ...string) result {
	var stdout, stderr bytes.Buffer
	at := time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC)
	code := run(context.Background(), args, &stdout, &stderr, func() time.Time { return at })
	return result{code, stdout.String(), stderr.String()}
}

// The client's output, read by the suite's own parser
// (conformance/utils/echo.ParseResponse), gives the suite what it
// compares: status, the server's Hostname, Host and path, the request
// headers the server saw, the response headers; flags as the suite writes
// them (URL first, --method=, -H name:value).
func TestOutputParsedBySuite(t *testing.T) {
	srv := echoServer(t, false)
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct {
		name          string
		args          []string
		code, url     string
		host, method  string
		reqHeaders    map[string]string
		respHeaders   map[string]string
		protocol      string
		rawContains   []string
		rawNotContain []string
	}{{
		name: "the suite's GET with a header and a Host",
		args: []string{"http://" + addr + "/v2/a?x=1", "--method=GET", "-H", "X-Echo-Set:one", "-H", "Host:echo"},
		code: "200", url: "/v2/a?x=1", host: "echo", method: "GET", protocol: "HTTP/1.1",
		reqHeaders:  map[string]string{"X-Echo-Set": "one"},
		respHeaders: map[string]string{"X-Served-By": "echo-v1"},
		rawContains: []string{"[0] Url=http://" + addr + "/v2/a?x=1\n", "[0] Header=X-Echo-Set:one\n", "[0] StatusCode=200\n", "[0 body] Hostname=echo-v1-7d9f\n",
			"2026-12-02T16:00:00.000000Z\tinfo\tAll requests succeeded\n"},
		rawNotContain: []string{"Header=Host:"},
	}, {
		name: "a path Go would clean is sent as written",
		args: []string{"http://" + addr + "/a/../b//c", "--method", "POST"},
		code: "200", url: "/a/../b//c", host: addr, method: "POST", protocol: "HTTP/1.1",
	}, {
		name: "a redirect is reported, not followed",
		args: []string{"http://" + addr + "/redirect"},
		code: "302", respHeaders: map[string]string{"Location": "/landed"},
	}, {
		name: "-L follows it",
		args: []string{"-L", "http://" + addr + "/redirect"},
		code: "200", url: "/landed", method: "GET",
	}, {
		name: "a comma splits -H values, as the original's string slice",
		args: []string{"http://" + addr + "/", "-H", "A:1,B:2"},
		code: "200", reqHeaders: map[string]string{"A": "1", "B": "2"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := runClient(tc.args...)
			if got.code != 0 {
				t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", got.code, got.stdout, got.stderr)
			}
			resp := echo.ParseResponse(got.stdout)
			for field, pair := range map[string][2]string{
				"Code": {resp.Code, tc.code}, "URL": {resp.URL, tc.url}, "Host": {resp.Host, tc.host},
				"Method": {resp.Method, tc.method}, "Protocol": {resp.Protocol, tc.protocol},
			} {
				if pair[1] != "" && pair[0] != pair[1] {
					t.Errorf("%s = %q, want %q; output:\n%s", field, pair[0], pair[1], got.stdout)
				}
			}
			if tc.code == "200" && (resp.Hostname != "echo-v1-7d9f" || resp.IP != "127.0.0.1") {
				t.Errorf("Hostname %q IP %q, want echo-v1-7d9f 127.0.0.1", resp.Hostname, resp.IP)
			}
			for name, want := range tc.reqHeaders {
				if v := resp.RequestHeaders.Get(name); v != want {
					t.Errorf("request header %s = %q, want %q; output:\n%s", name, v, want, got.stdout)
				}
			}
			for name, want := range tc.respHeaders {
				if v := resp.ResponseHeaders.Get(name); v != want {
					t.Errorf("response header %s = %q, want %q; output:\n%s", name, v, want, got.stdout)
				}
			}
			for _, s := range tc.rawContains {
				if !strings.Contains(got.stdout, s) {
					t.Errorf("output lacks %q:\n%s", s, got.stdout)
				}
			}
			for _, s := range tc.rawNotContain {
				if strings.Contains(got.stdout, s) {
					t.Errorf("output has %q:\n%s", s, got.stdout)
				}
			}
		})
	}
}

// --count=N prints N responses parted by a blank line, which is how the
// suite's RequestBatch splits them (its parseMultipleResponses, not
// exported: split on "\n\n", keep sections with a Hostname or a code).
func TestCountPrintsResponsesPartedByBlankLines(t *testing.T) {
	srv := echoServer(t, false)
	got := runClient(srv.URL+"/", "--count=5")
	if got.code != 0 {
		t.Fatalf("exit %d: %s%s", got.code, got.stdout, got.stderr)
	}
	var responses []echo.Response
	for section := range strings.SplitSeq(got.stdout, "\n\n") {
		if r := echo.ParseResponse(strings.TrimSpace(section)); r.Hostname != "" || r.Code != "" {
			responses = append(responses, r)
		}
	}
	if len(responses) != 5 {
		t.Fatalf("%d responses, want 5:\n%s", len(responses), got.stdout)
	}
	for i, r := range responses {
		if r.Code != "200" || !strings.Contains(r.RawContent, fmt.Sprintf("[%d] StatusCode=200", i)) {
			t.Errorf("response %d: code %q, raw:\n%s", i, r.Code, r.RawContent)
		}
	}
}

// --http2 sends HTTP/2 with prior knowledge over plain text (h2c).
func TestHTTP2PriorKnowledge(t *testing.T) {
	srv := echoServer(t, true)
	got := runClient(srv.URL+"/", "--http2", "--count=2")
	if got.code != 0 {
		t.Fatalf("exit %d: %s%s", got.code, got.stdout, got.stderr)
	}
	if p := echo.ParseResponse(got.stdout).Protocol; p != "HTTP/2.0" {
		t.Fatalf("Proto %q, want HTTP/2.0:\n%s", p, got.stdout)
	}
	if p := echo.ParseResponse(runClient(srv.URL + "/").stdout).Protocol; p != "HTTP/1.1" {
		t.Fatalf("without --http2: Proto %q, want HTTP/1.1", p)
	}
}

// A failed request fails the run with exit 1 and the original's fatal log
// line; a bad command line exits 255 with cobra's "Error:" on stderr.
func TestExitCodes(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + closed.Addr().String() + "/"
	closed.Close()
	for _, tc := range []struct {
		name         string
		args         []string
		code         int
		stdout, errs string
	}{
		{name: "connection refused", args: []string{refused}, code: 1,
			stdout: "\tfatal\tError 1/1 requests had errors; first error: Get \"http:/\": dial tcp " + closed.Addr().String() + ": connect: connection refused\n"},
		{name: "a header without a colon", args: []string{refused, "-H", "nocolon"}, code: 1,
			stdout: "\tfatal\tinvalid header format: \"nocolon\" (want name:value)"},
		{name: "a scheme not implemented", args: []string{"tcp://127.0.0.1:9090"}, code: 1,
			stdout: `scheme "tcp" is not implemented by the e2e node agent's echo client (http, https, grpc)`},
		{name: "no URL", args: []string{"--method=GET"}, code: 255, errs: "Error: accepts 1 arg(s), received 0\n"},
		{name: "two URLs", args: []string{refused, refused}, code: 255, errs: "Error: accepts 1 arg(s), received 2\n"},
		{name: "an unknown flag", args: []string{refused, "--nope"}, code: 255, errs: "Error: unknown flag: --nope\n"},
		{name: "a flag of the original not implemented", args: []string{refused, "--uds", "/tmp/s"}, code: 255,
			errs: "Error: flag --uds of the echo-advanced client is not implemented by the e2e node agent's\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := runClient(tc.args...)
			if got.code != tc.code || !strings.Contains(got.stdout, tc.stdout) || !strings.Contains(got.stderr, tc.errs) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
					got.code, got.stdout, got.stderr, tc.code, tc.stdout, tc.errs)
			}
		})
	}
}

// The whole run is bounded by --timeout, as the original's.
func TestTimeoutBoundsTheRun(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(block) })
	start := time.Now()
	got := runClient(srv.URL+"/", "--timeout=300ms", "--count=3")
	if got.code != 1 || time.Since(start) > 5*time.Second {
		t.Fatalf("exit %d after %v, want 1 within the timeout: %s", got.code, time.Since(start), got.stdout)
	}
	if !strings.Contains(got.stdout, "fatal\tError ") {
		t.Fatalf("no fatal line: %q", got.stdout)
	}
}

// grpc:// calls the echo-advanced server's EchoTestService/Echo: the
// response message's lines are the body the suite parses (its StatusCode
// and Hostname come from there), with the request's headers and
// X-Request-Id as metadata and the Host header as authority.
func TestGRPCEcho(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		method, authority, header, requestID, message string
	}
	calls := make(chan seen, 10)
	srv := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		var req rawMessage
		if err := stream.RecvMsg(&req); err != nil {
			return err
		}
		method, _ := grpc.MethodFromServerStream(stream)
		md, _ := metadata.FromIncomingContext(stream.Context())
		msg, _ := echowire.String(req)
		calls <- seen{method, strings.Join(md[":authority"], ","), strings.Join(md["x-echo"], ","), strings.Join(md["x-request-id"], ","), msg}
		if err := stream.SendHeader(metadata.Pairs("x-served-by", "echo-v2")); err != nil {
			return err
		}
		body := "ServiceVersion=v2\nStatusCode=200\nHost=echo\nHostname=echo-v2-55c4\n"
		resp := rawMessage(echowire.Message(body))
		return stream.SendMsg(&resp)
	}))
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)

	got := runClient("grpc://"+ln.Addr().String(), "-H", "X-Echo:on", "-H", "Host:echo", "--count=2")
	if got.code != 0 {
		t.Fatalf("exit %d: %s%s", got.code, got.stdout, got.stderr)
	}
	resp := echo.ParseResponse(got.stdout)
	if resp.Code != "200" || resp.Hostname != "echo-v2-55c4" || resp.Version != "v2" || resp.ResponseHeaders.Get("x-served-by") != "echo-v2" {
		t.Fatalf("parsed %+v from:\n%s", resp, got.stdout)
	}
	ids := map[string]bool{}
	for range 2 {
		c := <-calls
		if c.method != echoMethod || c.authority != "echo" || c.header != "on" || c.message != "HelloWorld" {
			t.Errorf("server saw %+v", c)
		}
		ids[c.requestID] = true
	}
	if !ids["0"] || !ids["1"] {
		t.Errorf("X-Request-Id values %v, want 0 and 1", ids)
	}
}

// https:// verifies nothing without --ca (as the original), and with it
// verifies the server against the CA for the Host header's name (the SNI);
// a server the CA did not issue fails the run.
func TestHTTPS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, echoBody(r, "tls-echo")+"Alpn="+r.TLS.NegotiatedProtocol+"\nServerName="+r.TLS.ServerName+"\n")
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	// Every httptest server has one certificate: another CA is made here.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "another CA"}, DNSNames: []string{"example.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	otherCA := filepath.Join(dir, "other.pem")
	if err := os.WriteFile(otherCA, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{name: "no CA: not verified", args: []string{srv.URL + "/"}, want: []string{"[0] StatusCode=200\n", "Alpn=http/1.1\n"}},
		{name: "the CA, the name from Host", args: []string{srv.URL + "/", "--ca", ca, "-H", "Host:example.com"},
			want: []string{"[0] StatusCode=200\n", "ServerName=example.com\n"}},
		{name: "--server-name over Host", args: []string{srv.URL + "/", "--ca", ca, "-H", "Host:echo", "--server-name=example.com"},
			want: []string{"[0] StatusCode=200\n", "ServerName=example.com\n", "Host=echo\n"}},
		{name: "another CA", args: []string{srv.URL + "/", "--ca", otherCA, "-H", "Host:example.com"}, code: 1,
			want: []string{"fatal\tError 1/1 requests had errors", "certificate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := runClient(tc.args...)
			if got.code != tc.code {
				t.Fatalf("exit %d, want %d: %s%s", got.code, tc.code, got.stdout, got.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(got.stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, got.stdout)
				}
			}
		})
	}
}
