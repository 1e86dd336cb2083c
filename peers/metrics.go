package peers

import "github.com/prometheus/client_golang/prometheus"

// metricNames are a topic's metric names, written out whole so that a
// search of the source finds each.
type metricNames struct {
	peers, writes, writeErrors, readErrors string
}

type metrics struct {
	peers                           prometheus.Gauge
	writes, writeErrors, readErrors prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, names metricNames, noun string) *metrics {
	m := &metrics{
		peers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: names.peers,
			Help: "Other replicas whose Envoys' " + noun + " this replica counts (their ConfigMaps).",
		}),
		writes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: names.writes,
			Help: "Writes of this replica's " + noun + " to its ConfigMap.",
		}),
		writeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: names.writeErrors,
			Help: "Failed writes of this replica's " + noun + "; retried at the next interval.",
		}),
		readErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: names.readErrors,
			Help: "Peers' " + noun + " that could not be decoded and were ignored.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.peers, m.writes, m.writeErrors, m.readErrors)
	}
	return m
}
