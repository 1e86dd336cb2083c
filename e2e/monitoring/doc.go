// Package monitoring tests what charts/tlsplane ships for on-call: the
// Grafana dashboard (dashboards/tlsplane.json) and the alerting rules
// (rules/tlsplane.rules.yaml). Every PromQL expression must parse with
// Prometheus's own parser and name only metrics a running tlsplane
// exports; the alerts are unit-tested with promtool on synthetic series
// (testdata/rules_test.yaml). It owns no production code: only the list
// of metric families that exist in Kubernetes mode alone, which e2e/kube
// checks on a live tlsplane.
package monitoring
