package crlfetch

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the fetch outcomes, and each wanted list's age and
// nextUpdate, read at scrape time: one series per wanted URL, so bounded by
// MaxURLs.
type metrics struct {
	fetches *prometheus.CounterVec
	age     *prometheus.Desc
	next    *prometheus.Desc
	fetcher *Fetcher
}

func newMetrics(f *Fetcher, reg prometheus.Registerer) *metrics {
	m := &metrics{
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlsplane_crl_fetches_total",
			Help: "Fetches of revocation lists from CRL distribution points, by outcome: ok, not_allowed, request_failed, http_status, too_large, invalid_list, wrong_signer, older_list.",
		}, []string{"outcome"}),
		age: prometheus.NewDesc("tlsplane_crl_age_seconds",
			"Seconds since the last good revocation list of each wanted distribution point was fetched.", []string{"url"}, nil),
		next: prometheus.NewDesc("tlsplane_crl_next_update_timestamp_seconds",
			"The nextUpdate (Unix seconds) of the last good list of each wanted distribution point: past it, Envoy refuses every certificate of the CA.", []string{"url"}, nil),
		fetcher: f,
	}
	if reg != nil {
		reg.MustRegister(m.fetches, m)
	}
	return m
}

func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.age
	ch <- m.next
}

func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	now := m.fetcher.cfg.Now()
	for _, s := range m.fetcher.Status() {
		if s.FetchedAt == nil {
			continue
		}
		ch <- prometheus.MustNewConstMetric(m.age, prometheus.GaugeValue, now.Sub(*s.FetchedAt).Seconds(), s.URL)
		if s.NextUpdate != nil {
			ch <- prometheus.MustNewConstMetric(m.next, prometheus.GaugeValue, float64(s.NextUpdate.Unix()), s.URL)
		}
	}
}
