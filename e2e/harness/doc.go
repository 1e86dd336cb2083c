// Package harness is what the end-to-end suites (e2e/envoy, e2e/faults,
// e2e/kube) share to run real processes: children in their own process
// group that die with the test (procs.go), test PKI written as files
// (pki.go), a real Envoy with ADS to tlsplane and its admin API
// (envoy.go), and `tlsplane serve` waited on until ready (tlsplane.go).
//
// It uses only the standard library and knows nothing of any scenario:
// what a suite asserts stays in the suite.
package harness
