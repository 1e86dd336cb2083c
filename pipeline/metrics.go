package pipeline

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// metrics of the pipeline; snapshot and xDS metrics live with those stages.
type metrics struct {
	translationDuration prometheus.Histogram
	changeWait          prometheus.Histogram
	translationErrors   prometheus.Counter
	publishErrors       prometheus.Counter
	policies            *prometheus.GaugeVec
	caNotAfter          *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		translationDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "tlsplane_translation_duration_seconds",
			Help: "Time to translate the source's objects into Envoy resources and statuses.",
			// 100µs to ~6.5s: from a quickstart to tens of thousands of policies.
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 17),
		}),
		changeWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "tlsplane_change_wait_seconds",
			Help: "Time from the first change a pass takes in to the pass starting: the debounce's wait, near zero for a change that comes alone.",
			// 10µs to ~1.3s: a lone change to a burst held for its cap.
			Buckets: prometheus.ExponentialBuckets(0.00001, 2, 18),
		}),
		translationErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlsplane_translation_errors_total",
			Help: "Translations that failed; the served configuration stayed unchanged.",
		}),
		publishErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlsplane_publish_errors_total",
			Help: "Translations whose snapshots could not be published; the previous snapshots stayed served.",
		}),
		policies: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tlsplane_policies",
			Help: "BackendTLSPolicies by condition type, status and reason, in the conditions this controller writes.",
		}, []string{"type", "status", "reason"}),
		// One series per CA secret served: bounded by the policies' CA refs.
		caNotAfter: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tlsplane_ca_not_after_timestamp_seconds",
			Help: "The earliest notAfter (Unix seconds) among the certificates of each trusted CA served, by source: its SDS secret name, CA/<namespace>/configmap/<name> or CA/<namespace>/secret/<name>.",
		}, []string{"source"}),
	}
	if reg != nil {
		reg.MustRegister(m.translationDuration, m.changeWait, m.translationErrors, m.publishErrors, m.policies, m.caNotAfter)
	}
	return m
}

// conditionKey is one (type, status, reason) gauge series.
type conditionKey struct{ typ, status, reason string }

// countPolicies replaces the policies gauge. A policy counts once per
// series even when several of its ancestor entries carry the condition.
func (m *metrics) countPolicies(statuses map[types.NamespacedName]gwv1.PolicyStatus, controller gwv1.GatewayController) {
	if controller == "" {
		controller = translator.DefaultControllerName
	}
	counts := map[conditionKey]int{}
	for _, st := range statuses {
		seen := map[conditionKey]bool{}
		for _, anc := range st.Ancestors {
			if anc.ControllerName != controller {
				continue
			}
			for _, c := range anc.Conditions {
				k := conditionKey{c.Type, string(c.Status), c.Reason}
				if !seen[k] {
					seen[k] = true
					counts[k]++
				}
			}
		}
	}
	m.policies.Reset()
	for k, n := range counts {
		m.policies.WithLabelValues(k.typ, k.status, k.reason).Set(float64(n))
	}
}

// setCANotAfter replaces the CA expiry gauge with the translation's.
func (m *metrics) setCANotAfter(notAfter map[string]time.Time) {
	m.caNotAfter.Reset()
	for source, at := range notAfter {
		m.caNotAfter.WithLabelValues(source).Set(float64(at.Unix()))
	}
}
