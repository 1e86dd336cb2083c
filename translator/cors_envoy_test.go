package translator_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlsplane/tlsplane/translator"
)

// TestEnvoyAcceptsCORS puts the CORS golden input's configuration (the
// CORS and header mutation filters in the connection manager, per-route
// policies with exact and regex origins) to Envoy 1.40's `--mode validate`.
func TestEnvoyAcceptsCORS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Envoy; skipped with -short")
	}
	envoyValidatesFleet(t, corsInputs(t), "shop/edge")
}

// corsInputs are the CORS golden input's objects.
func corsInputs(t *testing.T) translator.Inputs {
	t.Helper()
	docs, err := os.ReadFile(filepath.Join("..", "testdata", "translator", "gateway-cors.in.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return gatewayInputs(t, string(docs))
}

// TestEnvoyServesCORS runs Envoy 1.40 with the CORS golden input's route
// configuration behind the served HTTP filters, its cluster pointed at a
// loopback backend, and checks the answers the conformance suite does not:
// no Access-Control-Allow-Headers for "*" when the preflight asks for none,
// no "*" exposed with credentials, an origin with its default port, and a
// preflight from another origin answered by the gateway, not the backend.
func TestEnvoyServesCORS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Envoy; skipped with -short")
	}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Backend", "api")
	}))
	defer backend.Close()
	port := startCORSEnvoy(t, backend.URL)

	for _, tc := range []struct {
		name, method, path string
		header             map[string]string
		want               map[string]string // "" wants the header absent
		fromBackend        bool
	}{
		{name: "* headers echo what the preflight asks", method: "OPTIONS", path: "/any",
			header: map[string]string{"Origin": "https://other.example", "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "x-a, x-b"},
			want:   map[string]string{"Access-Control-Allow-Origin": "https://other.example", "Access-Control-Allow-Methods": "PUT", "Access-Control-Allow-Headers": "x-a, x-b", "Access-Control-Allow-Credentials": "true", "Access-Control-Max-Age": "5"}},
		{name: "* headers without a request for any answer none", method: "OPTIONS", path: "/any",
			header: map[string]string{"Origin": "https://other.example", "Access-Control-Request-Method": "PUT"},
			want:   map[string]string{"Access-Control-Allow-Origin": "https://other.example", "Access-Control-Allow-Headers": "", "Access-Control-Expose-Headers": ""}},
		{name: "no * exposed with credentials", method: "GET", path: "/any", fromBackend: true,
			header: map[string]string{"Origin": "https://other.example"},
			want:   map[string]string{"Access-Control-Allow-Origin": "https://other.example", "Access-Control-Allow-Credentials": "true", "Access-Control-Expose-Headers": "", "Access-Control-Allow-Headers": ""}},
		{name: "an origin with its default port", method: "OPTIONS", path: "/origins",
			header: map[string]string{"Origin": "https://www.foo.com:443", "Access-Control-Request-Method": "GET"},
			want:   map[string]string{"Access-Control-Allow-Origin": "https://www.foo.com:443", "Access-Control-Allow-Methods": "GET, OPTIONS", "Access-Control-Expose-Headers": "x-header-3", "Access-Control-Max-Age": "3600"}},
		{name: "a wildcard host takes several labels", method: "GET", path: "/origins", fromBackend: true,
			header: map[string]string{"Origin": "https://a.b.bar.com"},
			want:   map[string]string{"Access-Control-Allow-Origin": "https://a.b.bar.com", "Access-Control-Expose-Headers": "x-header-3"}},
		{name: "a preflight from another origin is the gateway's to answer", method: "OPTIONS", path: "/origins",
			header: map[string]string{"Origin": "https://bar.com", "Access-Control-Request-Method": "GET"},
			want:   map[string]string{"Access-Control-Allow-Origin": ""}},
		{name: "a request from another origin gets no CORS headers", method: "GET", path: "/origins", fromBackend: true,
			header: map[string]string{"Origin": "https://www.foo.com.evil"},
			want:   map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Expose-Headers": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, "http://127.0.0.1:"+strconv.Itoa(port)+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d, want 200", resp.StatusCode)
			}
			if got := resp.Header.Get("X-Backend") == "api"; got != tc.fromBackend {
				t.Errorf("answered by the backend: %v, want %v", got, tc.fromBackend)
			}
			for k, want := range tc.want {
				got, present := resp.Header.Values(k), len(resp.Header.Values(k)) > 0
				switch {
				case want == "" && present:
					t.Errorf("%s: %q, want none", k, got)
				case want != "" && (len(got) != 1 || got[0] != want):
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
		})
	}
}

// startCORSEnvoy starts Envoy serving the CORS golden input's one route
// configuration on a free loopback port, its cluster at backendURL.
func startCORSEnvoy(t *testing.T, backendURL string) int {
	t.Helper()
	envoy := translator.EnvoyBinary(t)
	out := translator.Translate(corsInputs(t), nil, time.Now(), translator.Options{ListenerAddress: "127.0.0.1"})
	fleet := out.Fleets["shop/edge"]
	if fleet == nil || len(fleet.Listeners) != 1 || len(fleet.Routes) != 1 {
		t.Fatalf("want one listener and one route configuration: %+v", fleet)
	}
	u, err := url.Parse(backendURL)
	if err != nil {
		t.Fatal(err)
	}
	backendPort, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	cluster := xdsCluster()
	cluster.Name, cluster.LoadAssignment.ClusterName, cluster.Http2ProtocolOptions = "shop/api/8080", "shop/api/8080", nil
	cluster.LoadAssignment.Endpoints[0].LbEndpoints[0].GetEndpoint().Address = socket("127.0.0.1", uint32(backendPort))
	hcm, err := anypb.New(&hcmv3.HttpConnectionManager{
		StatPrefix:     "cors",
		RouteSpecifier: &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: proto.Clone(fleet.Routes[0]).(*routev3.RouteConfiguration)},
		HttpFilters:    servedHTTPFilters(t, fleet.Listeners[0]),
	})
	if err != nil {
		t.Fatal(err)
	}
	port := freeLoopbackPort(t)
	bootstrap := &bootstrapv3.Bootstrap{StaticResources: &bootstrapv3.Bootstrap_StaticResources{
		Clusters: []*clusterv3.Cluster{cluster},
		Listeners: []*listenerv3.Listener{{
			Name:         "cors",
			Address:      socket("127.0.0.1", uint32(port)),
			FilterChains: []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{{Name: "envoy.filters.network.http_connection_manager", ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: hcm}}}}},
		}},
	}}
	dir := t.TempDir()
	path := writeBootstrap(t, dir, bootstrap)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, envoy, "--disable-hot-restart", "--log-level", "warn", "-c", path, "--log-path", filepath.Join(dir, "envoy.log"))
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return port
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "envoy.log"))
			t.Fatalf("Envoy does not listen on %d: %v\n%s", port, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freeLoopbackPort is a loopback port nothing listened on a moment ago.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
