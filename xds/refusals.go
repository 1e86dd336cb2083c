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
	log      *slog.Logger
	interval time.Duration // refusalLogInterval; tests shorten it
	limits   ConnectionLimits
	counter  *prometheus.CounterVec

	mu      sync.Mutex
	last    time.Time      // of the last line
	pending map[string]int // by reason, since that line
	source  string         // the last refused client, for the line
	// flushing: a line of what is pending is due at the interval's end,
	// so the last refusals of a flood are logged too.
	flushing bool
}

func newRefusals(log *slog.Logger, reg prometheus.Registerer, adm *admission) *refusals {
	r := &refusals{
		log: log, interval: refusalLogInterval, limits: adm.limits, pending: map[string]int{},
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

// note counts one refusal of conn; the log gets a line at once, then at
// most one per refusalLogInterval with what was refused meanwhile.
func (r *refusals) note(reason string, conn net.Conn) {
	r.counter.WithLabelValues(reason).Inc()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending[reason]++
	if conn != nil && conn.RemoteAddr() != nil {
		r.source = conn.RemoteAddr().String()
	}
	if wait := r.interval - time.Since(r.last); wait > 0 {
		if !r.flushing {
			r.flushing = true
			time.AfterFunc(wait, r.flush)
		}
		return
	}
	r.logLocked()
}

func (r *refusals) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushing = false
	if len(r.pending) > 0 {
		r.logLocked()
	}
}

func (r *refusals) logLocked() {
	r.log.Warn("xDS connections refused by the port's limits (at most one line per 10s)",
		"refused", r.pending, "lastClient", r.source,
		"maxConnections", r.limits.Connections, "maxPerSource", r.limits.PerSource,
		"maxHandshakes", r.limits.Handshakes, "maxHandshakesPerSource", r.limits.HandshakesPerSource)
	r.pending, r.last = map[string]int{}, time.Now()
}
