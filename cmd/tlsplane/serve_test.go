package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	sotw "github.com/envoyproxy/go-control-plane/pkg/client/sotw/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlsplane/tlsplane/xds"
)

func TestParseFleetNamespaces(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string][]string
		wantErr string
	}{
		{in: "", want: map[string][]string{}},
		{in: "edge=shop,pay;internal=ops", want: map[string][]string{"edge": {"pay", "shop"}, "internal": {"ops"}}},
		{in: " edge = shop , shop ; ", want: map[string][]string{"edge": {"shop"}}},
		{in: "edge", wantErr: `fleet entry "edge"`},
		{in: "=shop", wantErr: `fleet entry "=shop"`},
		{in: "edge=", wantErr: `fleet "edge": no namespaces`},
		{in: "edge=a;edge=b", wantErr: `fleet "edge": listed twice`},
	}
	for _, tt := range tests {
		got, err := parseFleetNamespaces(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseFleetNamespaces(%q) = %v, want error containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseFleetNamespaces(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestServeFlagsAndSourceErrors(t *testing.T) {
	if _, err := parseServeFlags(nil, io.Discard); err == nil || !strings.Contains(err.Error(), "no source") {
		t.Errorf("no source: %v", err)
	}
	cfg, err := parseServeFlags([]string{"--dir", t.TempDir()}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.xdsAddress != "127.0.0.1:18000" || cfg.adminAddress != "127.0.0.1:19000" {
		t.Errorf("default addresses = %s, %s", cfg.xdsAddress, cfg.adminAddress)
	}
	log := slog.New(slog.DiscardHandler)
	file := filepath.Join(t.TempDir(), "a.yaml")
	os.WriteFile(file, nil, 0o644)
	for _, dir := range []string{file, filepath.Join(t.TempDir(), "absent")} {
		cfg.dir = dir
		if _, _, err := buildSource(context.Background(), cfg, log, nil, sharing{}); err == nil || !strings.Contains(err.Error(), dir) {
			t.Errorf("--dir %s: %v, want an error naming it", dir, err)
		}
	}
	if _, err := parseServeFlags([]string{"--dir", ".", "--fleet-namespaces", "edge"}, io.Discard); err == nil {
		t.Error("a bad --fleet-namespaces was accepted")
	}
	if cfg.listenerAddress != "0.0.0.0" {
		t.Errorf("default --listener-address = %q, want 0.0.0.0", cfg.listenerAddress)
	}
	for _, bad := range []string{"localhost", "10.0.0.1:80", "fe80::1%eth0", ""} {
		if _, err := parseServeFlags([]string{"--dir", ".", "--listener-address", bad}, io.Discard); err == nil ||
			!strings.Contains(err.Error(), "listener-address") || !strings.Contains(err.Error(), `"`+bad+`" is not an IP address`) {
			t.Errorf("--listener-address %q: %v, want an error naming the flag and value", bad, err)
		}
	}
	if cfg, err := parseServeFlags([]string{"--dir", ".", "--listener-address", "::"}, io.Discard); err != nil || cfg.listenerAddress != "::" {
		t.Errorf("--listener-address :: = %+v, %v", cfg, err)
	}
	if _, err := parseServeFlags([]string{"--dir", ".", "stray"}, io.Discard); err == nil {
		t.Error("a positional argument was accepted")
	}
}

// servingPlane is `tlsplane serve --dir` on 127.0.0.1:0 ports.
type servingPlane struct {
	dir, xds, admin string
	done            chan error
}

func startServe(t *testing.T, dir string, flags ...string) *servingPlane {
	t.Helper()
	return startServeWith(t, dir, nil, flags...)
}

// startServeWith is startServe with tweak applied to the parsed flags.
func startServeWith(t *testing.T, dir string, tweak func(*serveConfig), flags ...string) *servingPlane {
	t.Helper()
	cfg, err := parseServeFlags(append([]string{"--dir", dir}, flags...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if tweak != nil {
		tweak(cfg)
	}
	xdsLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	adminLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &servingPlane{dir: dir, xds: xdsLis.Addr().String(), admin: adminLis.Addr().String(), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	logger := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	go func() { p.done <- serve(ctx, cfg, xds.Security{}, logger, xdsLis, adminLis) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-p.done:
			if err != nil {
				t.Errorf("serve returned %v after cancel", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop within 15s of cancel")
		}
	})
	return p
}

// testWriter sends the server's log to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// get fetches an admin path; code 0 means the request failed.
func (p *servingPlane) get(path string) (int, string) {
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get("http://" + p.admin + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// waitAdmin polls path (at most 10s) until it answers code and contains want.
func (p *servingPlane) waitAdmin(t *testing.T, path string, code int, want string) string {
	t.Helper()
	var gotCode int
	var body string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if gotCode, body = p.get(path); gotCode == code && strings.Contains(body, want) {
			return body
		}
	}
	t.Fatalf("GET %s = %d %q, want %d containing %q", path, gotCode, body, code, want)
	return ""
}

// cdsClient is a real ADS SotW client, as an Envoy of fleet quickstart.
func cdsClient(t *testing.T, addr string) sotw.ADSClient {
	t.Helper()
	conn, ctx := xdsConn(t, addr)
	c := sotw.NewADSClient(ctx, &corev3.Node{Id: "serve-test-1", Cluster: "quickstart"}, resource.ClusterType)
	if err := c.InitConnect(conn); err != nil {
		t.Fatal(err)
	}
	return c
}

// xdsConn is a plaintext gRPC connection to addr and a context whose
// deadline bounds every stream on it: a missing response fails the test.
func xdsConn(t *testing.T, addr string) (*grpc.ClientConn, context.Context) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return conn, ctx
}

// fetchClusters waits for the next CDS response, ACKs it and returns its
// cluster names, sorted.
func fetchClusters(t *testing.T, c sotw.ADSClient) []string {
	t.Helper()
	resp, err := c.Fetch()
	if err != nil {
		t.Fatalf("CDS fetch: %v", err)
	}
	var names []string
	for _, a := range resp.Resources {
		cl := &clusterv3.Cluster{}
		if err := a.UnmarshalTo(cl); err != nil {
			t.Fatal(err)
		}
		names = append(names, cl.GetName())
	}
	slices.Sort(names)
	if err := c.Ack(); err != nil {
		t.Fatal(err)
	}
	return names
}

func copyQuickstart(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files, _ := filepath.Glob("../../examples/quickstart/*.yaml")
	if len(files) < 4 {
		t.Fatalf("quickstart manifests: %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, filepath.Base(f)), string(data))
	}
	return dir
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestServeDirectoryThroughADS drives the whole file path: manifests on
// disk, the directory source, translation, snapshots, and a real ADS
// stream on 127.0.0.1.
func TestServeDirectoryThroughADS(t *testing.T) {
	dir := copyQuickstart(t)
	p := startServe(t, dir)
	p.waitAdmin(t, "/readyz", 200, "ready")
	p.waitAdmin(t, "/healthz", 200, "ok")

	c := cdsClient(t, p.xds)
	if got, want := fetchClusters(t, c), []string{"shop/catalog/8080", "shop/payments/8443"}; !slices.Equal(got, want) {
		t.Fatalf("initial CDS = %v, want %v", got, want)
	}
	p.waitAdmin(t, "/debug/status", 200, `"reason": "Accepted"`)
	p.waitAdmin(t, "/debug/snapshot?node=serve-test-1", 200, "payments.shop.example")

	// A file edit is delivered.
	catalog := filepath.Join(dir, "catalog.yaml")
	original, err := os.ReadFile(catalog)
	if err != nil {
		t.Fatal(err)
	}
	write(t, catalog, strings.ReplaceAll(string(original), "port: 8080", "port: 9090"))
	if got, want := fetchClusters(t, c), []string{"shop/catalog/9090", "shop/payments/8443"}; !slices.Equal(got, want) {
		t.Fatalf("CDS after editing catalog.yaml = %v, want %v", got, want)
	}

	// A deleted file removes its objects.
	if err := os.Remove(catalog); err != nil {
		t.Fatal(err)
	}
	if got, want := fetchClusters(t, c), []string{"shop/payments/8443"}; !slices.Equal(got, want) {
		t.Fatalf("CDS after deleting catalog.yaml = %v, want %v", got, want)
	}

	// A broken file keeps its last good objects: the next update, caused by
	// another file, still carries payments.
	write(t, filepath.Join(dir, "payments.yaml"), "kind: Service\nmetadata: [broken\n")
	p.waitAdmin(t, "/metrics", 200, "tlsplane_source_file_errors_total 1")
	write(t, catalog, string(original))
	if got, want := fetchClusters(t, c), []string{"shop/catalog/8080", "shop/payments/8443"}; !slices.Equal(got, want) {
		t.Fatalf("CDS with payments.yaml broken = %v, want %v (payments kept)", got, want)
	}
	p.waitAdmin(t, "/metrics", 200, "tlsplane_translation_duration_seconds_count")
}

// TestServeTwoInstancesServeIdenticalVersions: an Envoy that reconnects to
// another replica, fed the same directory, must see no change.
func TestServeTwoInstancesServeIdenticalVersions(t *testing.T) {
	dir := copyQuickstart(t)
	a, b := startServe(t, dir), startServe(t, dir)
	a.waitAdmin(t, "/readyz", 200, "ready")
	b.waitAdmin(t, "/readyz", 200, "ready")
	dumpA := a.waitAdmin(t, "/debug/snapshot?node=quickstart", 200, "versionInfo")
	dumpB := b.waitAdmin(t, "/debug/snapshot?node=quickstart", 200, "versionInfo")
	if dumpA != dumpB {
		t.Fatalf("two instances on one directory serve different snapshots:\n%s\n---\n%s", dumpA, dumpB)
	}
}
