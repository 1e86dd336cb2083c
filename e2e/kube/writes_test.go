package kube

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
)

// statusWrites is the sum over kinds of
// tlsplane_status_writes_total{kind=…,result="written"} of cp.
func (cp *controlPlane) statusWrites(t *testing.T) string {
	t.Helper()
	body, err := cp.get("/metrics")
	if err != nil {
		t.Fatalf("%s: %v", cp.name, err)
	}
	var sum float64
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "tlsplane_status_writes_total{") || !strings.Contains(line, `result="written"`) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[strings.LastIndex(line, "}")+1:]), 64)
		if err != nil {
			t.Fatalf("%s: /metrics line %q: %v", cp.name, line, err)
		}
		sum += v
	}
	return strconv.FormatFloat(sum, 'f', -1, 64)
}

// expectNoWriteStorm: once statuses are current, our own writes (which come
// back as watch events and re-translate) must not cause further writes.
func expectNoWriteStorm(t *testing.T, cp *controlPlane) {
	t.Helper()
	// The write that made the status current is visible on the API server
	// a moment before the writer counts it: let that one land first.
	time.Sleep(time.Second)
	sameFor(t, 3*time.Second, cp.name+" status writes", func() string { return cp.statusWrites(t) })
}
