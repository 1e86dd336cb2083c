package peers

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	peers                           prometheus.Gauge
	writes, writeErrors, readErrors prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		peers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tlsplane_handshake_peers",
			Help: "Other replicas whose Envoys' handshake windows this replica counts (their ConfigMaps).",
		}),
		writes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlsplane_handshake_peer_writes_total",
			Help: "Writes of this replica's handshake windows to its ConfigMap.",
		}),
		writeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlsplane_handshake_peer_write_errors_total",
			Help: "Failed writes of this replica's handshake windows; retried at the next interval.",
		}),
		readErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlsplane_handshake_peer_read_errors_total",
			Help: "Peers' handshake windows that could not be decoded and were ignored.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.peers, m.writes, m.writeErrors, m.readErrors)
	}
	return m
}
