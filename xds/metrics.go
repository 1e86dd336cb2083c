package xds

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlsplane/tlsplane/snapshots"
)

// otherTypes is the type_url label of every type tlsplane does not serve:
// the type URL is what a client sent, and a label value per distinct
// string would let any client grow the series without bound.
const otherTypes = "other"

// typeLabel is typeURL's type_url label: itself when served, else "other".
func typeLabel(typeURL string) string {
	if snapshots.Serves(typeURL) {
		return typeURL
	}
	return otherTypes
}

// metrics are the server's Prometheus series.
type metrics struct {
	streams   *prometheus.GaugeVec
	responses *prometheus.CounterVec
	nacks     *prometheus.CounterVec
	refused   prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		streams: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tlsplane_xds_streams",
			Help: "Open ADS streams by fleet (Envoy node.cluster) and the xDS type URLs they subscribed to (\"other\" for types tlsplane does not serve).",
		}, []string{"fleet", "type_url"}),
		responses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlsplane_xds_responses_total",
			Help: "xDS responses sent, SotW and delta, by type URL (\"other\" for types tlsplane does not serve).",
		}, []string{"type_url"}),
		nacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlsplane_xds_nacks_total",
			Help: "Responses Envoy rejected (requests carrying error_detail), by type URL (\"other\" for types tlsplane does not serve).",
		}, []string{"type_url"}),
		// No fleet label: the fleet is what the refused client claimed.
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlsplane_xds_streams_refused_total",
			Help: "ADS streams refused (PermissionDenied) because the client certificate does not carry the identity of the fleet its node names.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.streams, m.responses, m.nacks, m.refused)
	}
	return m
}
