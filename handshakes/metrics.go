package handshakes

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// metrics count failures per policy and reason. The policy label takes
// only policies of the last translation, and a deleted policy's series
// are deleted, so the series are bounded by the policies that exist.
type metrics struct {
	failures *prometheus.CounterVec
	// window is the failures within the window heard by every replica's
	// Envoys: the same on each replica, where the counter is its own.
	window *prometheus.GaugeVec

	mu     sync.Mutex
	series map[types.NamespacedName]map[string]bool
	// windowSeries are the (policy, reason) pairs window holds.
	windowSeries map[[2]string]bool
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlsplane_upstream_tls_failures_total",
			Help: "Upstream TLS handshakes that Envoys reported failed, on clusters a BackendTLSPolicy governs, by policy (namespace/name) and reason (the most specific counter: CertificateHashMismatch, SubjectAltNameMismatch, CertificateVerifyFailed, HandshakeFailed).",
		}, []string{"policy", "reason"}),
		window: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tlsplane_upstream_tls_window_failures",
			Help: "Upstream TLS handshakes that failed within --handshake-window, as the Envoys of every replica reported them (shared through the API server), by policy and reason; what tlsplane.io/HandshakesSucceeding counts. tlsplane_upstream_tls_failures_total counts only this replica's Envoys.",
		}, []string{"policy", "reason"}),
		series:       map[types.NamespacedName]map[string]bool{},
		windowSeries: map[[2]string]bool{},
	}
	if reg != nil {
		reg.MustRegister(m.failures, m.window)
	}
	return m
}

// byReason is the failures of attributed counts by reason, zeros left out.
func byReason(inc counts) map[string]uint64 {
	out := map[string]uint64{}
	for i, f := range failures {
		if inc[i] > 0 {
			out[f.reason] = inc[i]
		}
	}
	return out
}

// count adds inc's failures to each policy's series.
func (m *metrics) count(policies []types.NamespacedName, inc counts) {
	if len(policies) == 0 {
		return
	}
	// Most reports fail nothing: no map, no lock for them.
	if _, _, failed := inc.failed(); !failed {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range policies {
		if m.series[p] == nil {
			m.series[p] = map[string]bool{}
		}
		for i, f := range failures {
			if inc[i] > 0 {
				m.series[p][f.reason] = true
				m.failures.WithLabelValues(p.String(), f.reason).Add(float64(inc[i]))
			}
		}
	}
}

// keepOnly deletes the series of policies not in exists.
func (m *metrics) keepOnly(exists func(types.NamespacedName) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for p, reasons := range m.series {
		if exists(p) {
			continue
		}
		for reason := range reasons {
			m.failures.DeleteLabelValues(p.String(), reason)
		}
		delete(m.series, p)
	}
}

// setWindow sets each policy's failures within the window, by reason, and
// deletes the series of pairs that have none left.
func (m *metrics) setWindow(byPolicy map[types.NamespacedName][]observation) {
	now := map[[2]string]float64{}
	for p, obs := range byPolicy {
		for _, o := range obs {
			for reason, n := range byReason(o.sum) {
				now[[2]string{p.String(), reason}] += float64(n)
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.windowSeries {
		if _, ok := now[k]; !ok {
			m.window.DeleteLabelValues(k[0], k[1])
			delete(m.windowSeries, k)
		}
	}
	for k, v := range now {
		m.window.WithLabelValues(k[0], k[1]).Set(v)
		m.windowSeries[k] = true
	}
}
