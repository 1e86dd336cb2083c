package snapshots

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the publisher's Prometheus series.
type metrics struct {
	publishes *prometheus.CounterVec
	duration  prometheus.Histogram
	resources *prometheus.GaugeVec
	refused   prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		publishes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlsplane_snapshot_publishes_total",
			Help: "Translations handed to the publisher, by result: changed (snapshots set), unchanged (nothing sent), error (previous snapshots kept).",
		}, []string{"result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tlsplane_snapshot_publish_duration_seconds",
			Help:    "Time to validate, version and set the snapshots of one translation.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 8),
		}),
		resources: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tlsplane_snapshot_resources",
			Help: "Resources in the last published translation, by xDS type URL: what every fleet may be served plus what the Gateway fleets own.",
		}, []string{"type_url"}),
		refused: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tlsplane_snapshot_refused_fleets",
			Help: "Fleets (and namespaces of the clusters every fleet is served) the last publish refused: they keep their previous snapshot; /debug/status and the Gateway's Programmed condition say why.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.publishes, m.duration, m.resources, m.refused)
	}
	return m
}
