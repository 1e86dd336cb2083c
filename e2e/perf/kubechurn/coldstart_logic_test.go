package kubechurn

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// BenchmarkKubeColdStart's own logic, without processes.

func policyWithAncestors(name string, ancestors int) *gwv1.BackendTLSPolicy {
	p := &gwv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "churn-0", Name: name}}
	p.Status.Ancestors = make([]gwv1.PolicyAncestorStatus, ancestors)
	return p
}

func TestFirstStatusesCountFromStart(t *testing.T) {
	f := &firstStatuses{n: 2, seen: map[string]time.Duration{}}
	f.observe(policyWithAncestors("a", 1)) // before start: not tlsplane's
	f.start(time.Now())
	f.observe(policyWithAncestors("b", 0)) // no status yet
	f.observe(policyWithAncestors("a", 1))
	if _, err := f.wait(50*time.Millisecond, func() bool { return false }); err == nil {
		t.Fatal("wait returned with 1 of 2 policies' statuses")
	}
	f.observe(policyWithAncestors("b", 1))
	first := f.seen["churn-0/a"]
	f.observe(policyWithAncestors("a", 2)) // a later status is not the first
	times, err := f.wait(time.Second, func() bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if len(times) != 2 || !slices.IsSorted(times) || times[0] != first {
		t.Errorf("times %v, want 2 sorted, the first %v", times, first)
	}
	if _, err := (&firstStatuses{n: 1, seen: map[string]time.Duration{}}).wait(time.Second, func() bool { return true }); err == nil {
		t.Error("wait ignored tlsplane exiting")
	}
}

func TestMetricsDelta(t *testing.T) {
	before := map[string]float64{`a{x="1"}`: 3, `b{}`: 5}
	after := map[string]float64{`a{x="1"}`: 10, `b{}`: 5, `c{}`: 2}
	if got, want := metricsDelta(before, after), []string{`a{x="1"} +7`, `c{} +2`}; !slices.Equal(got, want) {
		t.Errorf("metricsDelta = %q, want %q", got, want)
	}
}
