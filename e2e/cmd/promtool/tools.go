//go:build tools

// Package tools pins promtool's main package in this module, so
// `go build github.com/prometheus/prometheus/cmd/promtool` resolves from
// go.sum. Keep its version the one e2e/go.mod requires: the rules' tests
// and the dashboard's parser checks then run one Prometheus.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
