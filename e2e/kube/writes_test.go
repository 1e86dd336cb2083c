package kube

import (
	"testing"
	"time"
)

// statusWrites is the sum over kinds of
// tlsplane_status_writes_total{kind=…,result="written"} of cp.
func (cp *controlPlane) statusWrites(t *testing.T) string {
	t.Helper()
	return cp.metricSum(t, "tlsplane_status_writes_total", `result="written"`)
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
