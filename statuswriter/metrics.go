package statuswriter

import (
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	writes *prometheus.CounterVec
	leader prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlsplane_status_writes_total",
			Help: "Status writes by kind (BackendTLSPolicy, GatewayClass, Gateway, ListenerSet, HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, UDPRoute) and result: written, unchanged (compare found nothing to do), conflict, error, rejected.",
		}, []string{"kind", "result"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tlsplane_status_leader",
			Help: "1 while this replica holds the Lease and writes status.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.writes, m.leader)
	}
	return m
}
