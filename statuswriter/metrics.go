package statuswriter

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlsplane/tlsplane/translator"
)

type metrics struct {
	writes *prometheus.CounterVec
	leader prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlsplane_status_writes_total",
			Help: "Status writes by kind (BackendTLSPolicy, GatewayClass, Gateway, ListenerSet, " + routeKindNames() + ", XBackend, XBackendTrafficPolicy, XMesh) and result: written, unchanged (compare found nothing to do), conflict, error, rejected.",
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

// routeKindNames lists every route kind (translator.RouteKinds).
func routeKindNames() string {
	var names []string
	for _, rk := range translator.RouteKinds {
		names = append(names, string(rk.Kind()))
	}
	return strings.Join(names, ", ")
}
