package kube

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
	"time"
)

// statusWrites is tlsplane_status_writes_total{result="written"} of cp.
func (cp *controlPlane) statusWrites(t *testing.T) string {
	t.Helper()
	body, err := cp.get("/metrics")
	if err != nil {
		t.Fatalf("%s: %v", cp.name, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, `tlsplane_status_writes_total{result="written"}`) {
			return strings.TrimSpace(strings.TrimPrefix(line, `tlsplane_status_writes_total{result="written"}`))
		}
	}
	return "0"
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
