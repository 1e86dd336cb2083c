package informers

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	events      *prometheus.CounterVec
	watchErrors *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlsplane_kube_events_total",
			Help: "Informer events, by kind and outcome: translated; ignored (unreferenced or unchanged); status (only the status of a kind whose status tlsplane writes changed: compared by the status writer, not translated).",
		}, []string{"kind", "outcome"}),
		watchErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlsplane_kube_watch_errors_total",
			Help: "Failed lists or watches of the API server, by kind; informers retry with backoff.",
		}, []string{"kind"}),
	}
	if reg != nil {
		reg.MustRegister(m.events, m.watchErrors)
	}
	return m
}
