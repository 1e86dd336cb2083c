package harness

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// ParseStats reads the integer counters and gauges of an Envoy admin
// /stats page ("name: value" lines), by name; histograms are skipped.
func ParseStats(body []byte) (map[string]int64, error) {
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64); err == nil {
			out[name] = n
		}
	}
	return out, sc.Err()
}

// PrometheusSamples reads the integer samples of a Prometheus text
// exposition (Envoy's /stats/prometheus), by metric name and labels ("{}"
// dropped).
func PrometheusSamples(body string) map[string]int64 {
	out := map[string]int64{}
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseInt(line[i+1:], 10, 64); err == nil {
			out[strings.TrimSuffix(line[:i], "{}")] = v
		}
	}
	return out
}
