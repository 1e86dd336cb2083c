package backendcerts

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// metrics: the earliest notAfter per (policy, cluster), whose series are
// bounded by the policies of the last translation and the clusters they
// govern that Envoys reported on; and what Record kept and dropped.
type metrics struct {
	expiry    *prometheus.GaugeVec
	sightings prometheus.Counter
	evictions prometheus.Counter
	entries   prometheus.Gauge

	mu sync.Mutex
	// series are the (namespace, policy, cluster) expiry holds, with the
	// value last set: most passes change none.
	series map[[3]string]float64
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		expiry: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tlsplane_backend_certificate_expiry_timestamp_seconds",
			Help: "The earliest notAfter (Unix seconds) among the certificates the backends of a cluster a BackendTLSPolicy governs presented, as the Envoys of every replica reported them within --backend-certificate-retention; by policy namespace, policy name and cluster.",
		}, []string{"namespace", "policy", "cluster"}),
		sightings: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlsplane_backend_certificate_sightings_total",
			Help: "Backend certificate sightings (sampled upstream TLS connections) the Envoys connected to this replica reported and the inventory recorded.",
		}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlsplane_backend_certificate_evictions_total",
			Help: "Inventory entries (fleet, cluster, upstream host) dropped, the one seen longest ago first, because --backend-certificate-max-entries was reached.",
		}),
		entries: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tlsplane_backend_certificate_entries",
			Help: "Inventory entries (fleet, cluster, upstream host) this replica's Envoys reported within --backend-certificate-retention.",
		}),
		series: map[[3]string]float64{},
	}
	if reg != nil {
		reg.MustRegister(m.expiry, m.sightings, m.evictions, m.entries)
	}
	return m
}

func (m *metrics) recorded(evicted bool, entries int) {
	m.sightings.Inc()
	if evicted {
		m.evictions.Inc()
	}
	m.entries.Set(float64(entries))
}

// setExpiry sets each (policy, cluster)'s earliest notAfter and deletes
// the series of pairs no longer seen.
func (m *metrics) setExpiry(byPolicy map[types.NamespacedName][]Entry) {
	now := map[[3]string]float64{}
	for p, obs := range byPolicy {
		for _, e := range obs {
			k := [3]string{p.Namespace, p.Name, e.Cluster}
			v := float64(e.NotAfter.Unix())
			if old, ok := now[k]; !ok || v < old {
				now[k] = v
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.series {
		if _, ok := now[k]; !ok {
			m.expiry.DeleteLabelValues(k[0], k[1], k[2])
			delete(m.series, k)
		}
	}
	for k, v := range now {
		if old, ok := m.series[k]; ok && old == v {
			continue
		}
		m.expiry.WithLabelValues(k[0], k[1], k[2]).Set(v)
		m.series[k] = v
	}
}
