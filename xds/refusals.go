package xds

import (
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// refusalLogInterval spaces the log lines about refused connections: a
// flood refuses thousands a second, and one line per connection would
// turn it into a flood of the log.
const refusalLogInterval = 10 * time.Second

// refusals counts and logs the connections the limits refused or closed.
type refusals struct {
	log     *slog.Logger
	limits  ConnectionLimits
	counter *prometheus.CounterVec

	mu      sync.Mutex
	last    time.Time      // of the last line
	pending map[string]int // by reason, since that line
	source  string         // the last refused client, for the line
}

func newRefusals(log *slog.Logger, reg prometheus.Registerer, adm *admission) *refusals {
	r := &refusals{
		log: log, limits: adm.limits, pending: map[string]int{},
		counter: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlsplane_xds_connections_refused_total",
			Help: "xDS connections refused or closed by the port's limits, by reason: total and per_source (refused at accept: established connections fill the budget), handshake_evicted (the oldest handshake of a full budget, closed for a newer connection), handshake_timeout (no completed handshake within --xds-handshake-timeout).",
		}, []string{"reason"}),
	}
	// Every reason exported from the start, at zero: a rate needs it.
	for _, reason := range []string{RefusedTotal, RefusedPerSource, RefusedHandshakeEvicted, RefusedHandshakeTimeout} {
		r.counter.WithLabelValues(reason)
	}
	open := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tlsplane_xds_connections",
		Help: "Open xDS connections, handshaking or established.",
	}, func() float64 { open, _ := adm.counts(); return float64(open) })
	handshaking := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tlsplane_xds_connections_handshaking",
		Help: "Open xDS connections that have not completed their handshake yet.",
	}, func() float64 { _, h := adm.counts(); return float64(h) })
	limit := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tlsplane_xds_connection_limit",
		Help: "The xDS port's connection limits (0: none): connections, per_source, handshakes, handshakes_per_source.",
	}, []string{"limit"})
	limit.WithLabelValues("connections").Set(float64(adm.limits.Connections))
	limit.WithLabelValues("per_source").Set(float64(adm.limits.PerSource))
	limit.WithLabelValues("handshakes").Set(float64(adm.limits.Handshakes))
	limit.WithLabelValues("handshakes_per_source").Set(float64(adm.limits.HandshakesPerSource))
	if reg != nil {
		reg.MustRegister(r.counter, open, handshaking, limit)
	}
	return r
}

// note counts one refusal of conn, and logs what was refused since the
// last line once refusalLogInterval has passed.
func (r *refusals) note(reason string, conn net.Conn) {
	r.counter.WithLabelValues(reason).Inc()
	now := time.Now()
	r.mu.Lock()
	r.pending[reason]++
	if conn != nil && conn.RemoteAddr() != nil {
		r.source = conn.RemoteAddr().String()
	}
	if now.Sub(r.last) < refusalLogInterval {
		r.mu.Unlock()
		return
	}
	counts, source := r.pending, r.source
	r.pending, r.last = map[string]int{}, now
	r.mu.Unlock()
	r.log.Warn("xDS connections refused by the port's limits (at most one line per 10s)",
		"refused", counts, "lastClient", source,
		"maxConnections", r.limits.Connections, "maxPerSource", r.limits.PerSource,
		"maxHandshakes", r.limits.Handshakes, "maxHandshakesPerSource", r.limits.HandshakesPerSource)
}
