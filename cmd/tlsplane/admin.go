package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tlsplane/tlsplane/xds"
)

// snapshotView is what the admin server reads of *snapshots.Publisher.
type snapshotView interface {
	Ready() bool
	DebugSnapshot(nodeID string) ([]byte, error)
}

// statusView is what the admin server reads of *pipeline.StatusStore.
type statusView interface {
	DebugJSON() ([]byte, error)
}

// connectionsView is what the admin server reads of *xds.Server.
type connectionsView interface {
	Connections() xds.Connections
}

// newRegistry is the process's own registry, not the global default, so
// only what tlsplane registers (plus Go and process stats) is exported.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Which build a fleet's control plane runs, for dashboards and rollouts.
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "tlsplane_build_info", Help: "Always 1; the version label is the tlsplane build.",
		ConstLabels: prometheus.Labels{"version": version},
	})
	buildInfo.Set(1)
	reg.MustRegister(buildInfo)
	return reg
}

// newAdminHandler serves health, readiness, metrics and debug views.
func newAdminHandler(snaps snapshotView, statuses statusView, conns connectionsView, gatherer prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	// Ready once a first snapshot is set: before that an Envoy that
	// connects gets nothing, so a load balancer should not send it here.
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !snaps.Ready() {
			http.Error(w, "no snapshot set yet", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /debug/snapshot", loopbackOnly(func(w http.ResponseWriter, r *http.Request) {
		node := r.URL.Query().Get("node")
		if node == "" {
			http.Error(w, "query parameter node is required: /debug/snapshot?node=ID", http.StatusBadRequest)
			return
		}
		body, err := snaps.DebugSnapshot(node)
		if err != nil {
			http.Error(w, fmt.Sprintf("node %q: %v", node, err), http.StatusNotFound)
			return
		}
		writeJSON(w, body)
	}))
	mux.HandleFunc("GET /debug/status", loopbackOnly(func(w http.ResponseWriter, _ *http.Request) {
		body, err := statuses.DebugJSON()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, body)
	}))
	// Every connected Envoy and, per type, what it was sent and accepted:
	// what `tlsplane status` prints.
	mux.HandleFunc("GET /debug/connections", loopbackOnly(func(w http.ResponseWriter, _ *http.Request) {
		body, err := json.MarshalIndent(conns.Connections(), "", "  ")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, body)
	}))
	// Loopback only, as the views above: a profile costs the process CPU
	// (a CPU profile runs for up to a minute).
	mux.HandleFunc("GET /debug/pprof/{name}", loopbackOnly(profileHandler))
	return mux
}

// loopbackOnly answers only clients on a loopback address. The debug views
// show every fleet's configuration, while the admin port is often open to
// the network for probes and scraping (deploy/ binds it to 0.0.0.0); an
// operator reaches them from the host or through `kubectl port-forward`,
// which connects over the Pod's loopback.
func loopbackOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		addr, perr := netip.ParseAddr(host)
		if err != nil || perr != nil || !addr.Unmap().IsLoopback() {
			http.Error(w, fmt.Sprintf("%s answers loopback clients only (it shows every fleet's configuration); from %s use kubectl port-forward or the host itself", r.URL.Path, r.RemoteAddr), http.StatusForbidden)
			return
		}
		h(w, r)
	}
}

func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
	if len(body) > 0 && body[len(body)-1] != '\n' {
		w.Write([]byte("\n"))
	}
}
