package xds

import "github.com/prometheus/client_golang/prometheus"

// metrics are the server's Prometheus series.
type metrics struct {
	streams   *prometheus.GaugeVec
	responses *prometheus.CounterVec
	nacks     *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		streams: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tlsplane_xds_streams",
			Help: "Open ADS streams by fleet (Envoy node.cluster) and the xDS type URLs they subscribed to.",
		}, []string{"fleet", "type_url"}),
		responses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlsplane_xds_responses_total",
			Help: "xDS responses sent, SotW and delta, by type URL.",
		}, []string{"type_url"}),
		nacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlsplane_xds_nacks_total",
			Help: "Responses Envoy rejected (requests carrying error_detail), by type URL.",
		}, []string{"type_url"}),
	}
	if reg != nil {
		reg.MustRegister(m.streams, m.responses, m.nacks)
	}
	return m
}
