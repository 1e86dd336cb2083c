package peers

import "github.com/prometheus/client_golang/prometheus"

// metricOpts are a topic's metrics, each name written out whole so that a
// search of the source (e2e/monitoring) finds it.
type metricOpts struct {
	peers                           prometheus.GaugeOpts
	writes, writeErrors, readErrors prometheus.CounterOpts
}

type metrics struct {
	peers                           prometheus.Gauge
	writes, writeErrors, readErrors prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, opts metricOpts) *metrics {
	m := &metrics{
		peers:       prometheus.NewGauge(opts.peers),
		writes:      prometheus.NewCounter(opts.writes),
		writeErrors: prometheus.NewCounter(opts.writeErrors),
		readErrors:  prometheus.NewCounter(opts.readErrors),
	}
	if reg != nil {
		reg.MustRegister(m.peers, m.writes, m.writeErrors, m.readErrors)
	}
	return m
}
