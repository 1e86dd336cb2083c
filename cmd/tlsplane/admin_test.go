package main

import (
	"compress/gzip"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlsplane/tlsplane/xds"
)

type fakeSnapshots struct{ ready bool }

func (f *fakeSnapshots) Ready() bool { return f.ready }
func (f *fakeSnapshots) DebugSnapshot(node string) ([]byte, error) {
	if node != "envoy-1" {
		return nil, errors.New("no snapshot for this node")
	}
	return []byte(`{"clusters":[]}`), nil
}

type fakeStatuses struct{}

func (fakeStatuses) DebugJSON() ([]byte, error) { return []byte(`{"policies":[]}`), nil }

type fakeConnections struct{}

func (fakeConnections) Connections() xds.Connections {
	return xds.Connections{Connections: []xds.Connection{{Node: "envoy-1", Fleet: "edge", API: "sotw"}}}
}

func TestAdminEndpoints(t *testing.T) {
	snaps := &fakeSnapshots{}
	reg := newRegistry()
	probe := prometheus.NewCounter(prometheus.CounterOpts{Name: "tlsplane_probe_total", Help: "test"})
	reg.MustRegister(probe)
	probe.Inc()

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: newAdminHandler(snaps, fakeStatuses{}, fakeConnections{}, reg), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(lis)
	t.Cleanup(func() { srv.Close() })
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := client.Get("http://" + lis.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
	if code, _ := get("/readyz"); code != 503 {
		t.Errorf("/readyz before the first snapshot = %d, want 503", code)
	}
	snaps.ready = true
	if code, _ := get("/readyz"); code != 200 {
		t.Errorf("/readyz after the first snapshot = %d, want 200", code)
	}
	code, body := get("/metrics")
	for _, want := range []string{"tlsplane_probe_total 1", "go_goroutines", "process_", `tlsplane_build_info{version="` + version + `"} 1`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics = %d, lacks %q", code, want)
		}
	}
	if code, body := get("/debug/snapshot?node=envoy-1"); code != 200 || body != "{\"clusters\":[]}\n" {
		t.Errorf("/debug/snapshot?node=envoy-1 = %d %q", code, body)
	}
	if code, body := get("/debug/snapshot?node=ghost"); code != 404 || !strings.Contains(body, `"ghost"`) {
		t.Errorf("/debug/snapshot?node=ghost = %d %q, want 404 naming the node", code, body)
	}
	if code, _ := get("/debug/snapshot"); code != 400 {
		t.Errorf("/debug/snapshot without node = %d, want 400", code)
	}
	if code, body := get("/debug/status"); code != 200 || !strings.Contains(body, "policies") {
		t.Errorf("/debug/status = %d %q", code, body)
	}
	if code, body := get("/debug/connections"); code != 200 || !strings.Contains(body, `"node": "envoy-1"`) {
		t.Errorf("/debug/connections = %d %q", code, body)
	}
}

// TestProfilesAreGoPprofs: /debug/pprof/heap is a gzipped protocol buffer,
// the form `go tool pprof` reads, and a CPU profile of one second is one
// too.
func TestProfilesAreGoPprofs(t *testing.T) {
	h := newAdminHandler(&fakeSnapshots{ready: true}, fakeStatuses{}, fakeConnections{}, newRegistry())
	for _, path := range []string{"/debug/pprof/heap?gc=1", "/debug/pprof/allocs", "/debug/pprof/profile?seconds=1"} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.RemoteAddr = "127.0.0.1:5000"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		zr, err := gzip.NewReader(rec.Body)
		var body []byte
		if err == nil {
			body, err = io.ReadAll(zr)
		}
		if rec.Code != http.StatusOK || err != nil || len(body) == 0 {
			t.Errorf("GET %s = %d: not a gzipped profile (%d bytes): %v", path, rec.Code, len(body), err)
		}
	}
}

func TestDebugEndpointsAnswerLoopbackOnly(t *testing.T) {
	h := newAdminHandler(&fakeSnapshots{ready: true}, fakeStatuses{}, fakeConnections{}, newRegistry())
	for _, c := range []struct {
		remote string
		path   string
		want   int
	}{
		{"127.0.0.1:5000", "/debug/snapshot?node=envoy-1", http.StatusOK},
		{"[::1]:5000", "/debug/status", http.StatusOK},
		{"[::ffff:127.0.0.1]:5000", "/debug/status", http.StatusOK},
		{"10.1.2.3:5000", "/debug/snapshot?node=envoy-1", http.StatusForbidden},
		{"[2001:db8::1]:5000", "/debug/status", http.StatusForbidden},
		{"127.0.0.1:5000", "/debug/connections", http.StatusOK},
		{"10.1.2.3:5000", "/debug/connections", http.StatusForbidden},
		{"garbage", "/debug/status", http.StatusForbidden},
		{"127.0.0.1:5000", "/debug/pprof/heap", http.StatusOK},
		{"127.0.0.1:5000", "/debug/pprof/goroutine?debug=1", http.StatusOK},
		{"127.0.0.1:5000", "/debug/pprof/nosuch", http.StatusNotFound},
		{"127.0.0.1:5000", "/debug/pprof/profile?seconds=61", http.StatusBadRequest},
		{"10.1.2.3:5000", "/debug/pprof/heap", http.StatusForbidden},
		{"10.1.2.3:5000", "/debug/pprof/profile", http.StatusForbidden},
		// Probes and scraping stay open to the network.
		{"10.1.2.3:5000", "/readyz", http.StatusOK},
		{"10.1.2.3:5000", "/metrics", http.StatusOK},
	} {
		req := httptest.NewRequest(http.MethodGet, c.path, nil)
		req.RemoteAddr = c.remote
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("GET %s from %s = %d, want %d (%s)", c.path, c.remote, rec.Code, c.want, strings.TrimSpace(rec.Body.String()))
		}
	}
}
