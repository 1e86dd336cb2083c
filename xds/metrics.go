package xds

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlsplane/tlsplane/snapshots"
)

// otherTypes is the type_url label of every type tlsplane does not serve:
// the type URL is what a client sent, and a label value per distinct
// string would let any client grow the series without bound.
const otherTypes = "other"

// otherFleets is the fleet label of streams beyond MaxFleetLabels distinct
// fleets: without mutual TLS a node names its fleet itself.
const otherFleets = "other"

// MaxFleetLabels bounds the distinct fleet label values of
// tlsplane_xds_streams at any time; a fleet's value is freed when its last
// stream closes.
const MaxFleetLabels = 100

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
	// statsReports and statsDropped count the metrics service's reports
	// and the clusters dropped from them as not served to the fleet.
	statsReports prometheus.Counter
	statsDropped prometheus.Counter
	// sightings and sightingsDropped count the access log service's
	// entries handed on as certificate sightings, and those dropped.
	sightings        prometheus.Counter
	sightingsDropped *prometheus.CounterVec

	mu sync.Mutex
	// fleets counts the open streams holding each fleet label value.
	fleets map[string]int
	// series counts the streams behind each streams series, so a series
	// is deleted, not left at zero, when its last stream closes.
	series map[[2]string]int
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		streams: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tlsplane_xds_streams",
			Help: "Open ADS streams by fleet (Envoy node.cluster; \"other\" beyond 100 distinct fleets) and the xDS type URLs they subscribed to (\"other\" for types tlsplane does not serve).",
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
		statsReports: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlsplane_xds_stats_reports_total",
			Help: "Reports received on Envoy's metrics service (one per Envoy per stats flush).",
		}),
		statsDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlsplane_xds_stats_clusters_dropped_total",
			Help: "Clusters dropped from metrics service reports because the reporting fleet is not served them.",
		}),
		sightings: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlsplane_xds_certificate_sightings_total",
			Help: "Upstream TLS connections Envoy's access log service reported (sampled), handed on as certificate sightings.",
		}),
		sightingsDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlsplane_xds_certificate_sightings_dropped_total",
			Help: "Access log entries dropped, by reason: other_log, oversize, no_certificate, unparsable, not_served (a cluster the reporting fleet is not served).",
		}, []string{"reason"}),
		fleets: map[string]int{},
		series: map[[2]string]int{},
	}
	// Every reason's series exists from the start: the reasons are few and
	// fixed, and a rate reads from zero.
	for _, reason := range []string{DroppedOtherLog, DroppedOversize, DroppedNoCertificate, DroppedUnparsable, DroppedNotServed} {
		m.sightingsDropped.WithLabelValues(reason)
	}
	if reg != nil {
		reg.MustRegister(m.streams, m.responses, m.nacks, m.refused, m.statsReports, m.statsDropped, m.sightings, m.sightingsDropped)
	}
	return m
}

// acquireFleet returns the fleet label of a new stream of fleet: the fleet
// itself while fewer than MaxFleetLabels fleets hold a label, else "other".
// releaseFleet gives it back when the stream closes.
func (m *metrics) acquireFleet(fleet string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, held := m.fleets[fleet]; !held && len(m.fleets) >= MaxFleetLabels {
		fleet = otherFleets
	}
	m.fleets[fleet]++
	return fleet
}

func (m *metrics) releaseFleet(label string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fleets[label]--; m.fleets[label] <= 0 {
		delete(m.fleets, label)
	}
}

// streamOpened and streamClosed move one stream in or out of a streams
// series; the series is deleted with its last stream.
func (m *metrics) streamOpened(fleetLabel, typeLabel string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.series[[2]string{fleetLabel, typeLabel}]++
	m.streams.WithLabelValues(fleetLabel, typeLabel).Inc()
}

func (m *metrics) streamClosed(fleetLabel, typeLabel string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{fleetLabel, typeLabel}
	if m.series[k]--; m.series[k] > 0 {
		m.streams.WithLabelValues(fleetLabel, typeLabel).Dec()
		return
	}
	delete(m.series, k)
	m.streams.DeleteLabelValues(fleetLabel, typeLabel)
}
