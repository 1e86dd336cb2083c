package main

import "testing"

func TestFanoutAtTargetSize(t *testing.T) {
	for name, want := range map[string]bool{
		"BenchmarkFanout/delta/streams=1000/clusters=10000": true,
		"BenchmarkFanout/sotw/streams=2000/clusters=20000":  true,
		"BenchmarkFanout/delta/streams=1000/clusters=1000":  false,
		"BenchmarkFanout/sotw/streams=100/clusters=10000":   false,
		"BenchmarkFanout/delta":                             false,
	} {
		if got := fanoutAtTargetSize(name); got != want {
			t.Errorf("fanoutAtTargetSize(%q) = %v, want %v", name, got, want)
		}
	}
}
