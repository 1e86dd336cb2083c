// Package harness is the one fixture package of the end-to-end suites
// (every package under e2e/): the binaries they run (Envoy, tlsplane, the
// echo backend, helm, promtool), found one way, with a
// missing one skipped or, under CI=true, failed (binaries.go); children in
// their own process group that die with the test (procs.go); test PKI
// written as files (pki.go); a real Envoy with ADS to tlsplane and its
// admin API (envoy.go); `tlsplane serve` waited on until ready
// (tlsplane.go); and scripted ADS clients over real gRPC, a SotW one that
// ACKs or NACKs each response (adsclient.go) and a delta one that watches
// load assignments (loadassignments.go); a real CoreDNS on loopback whose
// records a test sets and changes, for Envoy's DNS clusters (dns.go).
//
// It knows nothing of any scenario: what a suite asserts stays in the
// suite. e2e/README.md says which suite proves what.
package harness
