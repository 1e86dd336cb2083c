package kubechurn

import (
	"strconv"
	"strings"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// histogram is a Prometheus histogram's count and sum, unlabelled.
type histogram struct{ count, sum float64 }

// passes reads tlsplane's translation and publish histograms from
// /metrics: how many passes the pipeline made and what they cost.
func passes(tp *harness.TLSPlane) (translate, publish histogram, err error) {
	body, err := harness.HTTPGet(tp.AdminURL("/metrics"))
	if err != nil {
		return histogram{}, histogram{}, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch name {
		case "tlsplane_translation_duration_seconds_count":
			translate.count = v
		case "tlsplane_translation_duration_seconds_sum":
			translate.sum = v
		case "tlsplane_snapshot_publish_duration_seconds_count":
			publish.count = v
		case "tlsplane_snapshot_publish_duration_seconds_sum":
			publish.sum = v
		}
	}
	return translate, publish, nil
}

// since is what h added over before: count, and mean in milliseconds.
func (h histogram) since(before histogram) (count, meanMs float64) {
	count = h.count - before.count
	if count > 0 {
		meanMs = (h.sum - before.sum) / count * 1000
	}
	return count, meanMs
}
