package kubechurn

import (
	"strconv"
	"strings"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// tlsplane's histograms the benchmarks read.
const (
	translationSeconds = "tlsplane_translation_duration_seconds"
	publishSeconds     = "tlsplane_snapshot_publish_duration_seconds"
	// changeWaitSeconds is the debounce's wait per pass: from the first
	// change a pass takes in to the pass starting.
	changeWaitSeconds = "tlsplane_change_wait_seconds"
)

// histogram is a Prometheus histogram's count and sum, unlabelled.
type histogram struct{ count, sum float64 }

// tlsplaneMetrics reads tlsplane's unlabelled samples from /metrics.
func tlsplaneMetrics(tp *harness.TLSPlane) (map[string]float64, error) {
	body, err := harness.HTTPGet(tp.AdminURL("/metrics"))
	if err != nil {
		return nil, err
	}
	return unlabelledSamples(string(body)), nil
}

// unlabelledSamples are a Prometheus exposition's samples without labels,
// by name.
func unlabelledSamples(body string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(body, "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] = v
		}
	}
	return out
}

// histogramOf is histogram name in samples read by tlsplaneMetrics.
func histogramOf(samples map[string]float64, name string) histogram {
	return histogram{count: samples[name+"_count"], sum: samples[name+"_sum"]}
}

// passes reads tlsplane's translation and publish histograms from
// /metrics: how many passes the pipeline made and what they cost.
func passes(tp *harness.TLSPlane) (translate, publish histogram, err error) {
	m, err := tlsplaneMetrics(tp)
	if err != nil {
		return histogram{}, histogram{}, err
	}
	return histogramOf(m, translationSeconds), histogramOf(m, publishSeconds), nil
}

// since is what h added over before: count, and mean in milliseconds.
func (h histogram) since(before histogram) (count, meanMs float64) {
	count = h.count - before.count
	if count > 0 {
		meanMs = (h.sum - before.sum) / count * 1000
	}
	return count, meanMs
}

// add is h and o together: the sum of two windows' observations.
func (h histogram) add(o histogram) histogram { return histogram{h.count + o.count, h.sum + o.sum} }

// minus is what h observed after before.
func (h histogram) minus(before histogram) histogram {
	return histogram{h.count - before.count, h.sum - before.sum}
}

// meanMs is the mean observation in milliseconds; 0 for none.
func (h histogram) meanMs() float64 {
	if h.count <= 0 {
		return 0
	}
	return h.sum / h.count * 1000
}
