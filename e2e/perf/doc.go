// Package perf measures propagation with a real Envoy: tlsplane serve
// --dir with N policy-targeted Services, Envoy on ADS, and a series of
// edits (CA rotations and policy edits), each timed from the file write to
// Envoy's stats showing it applied. It is run by `make bench`, never by
// `make test`: TestPropagation skips unless -perf.propagation is given.
//
// It is the half of tlsplane's performance code that needs real processes
// (the e2e module: e2e/harness, e2e/apiserver); the in-process benchmarks
// and the commands that render docs/performance.md are the main module's
// perf/ (its doc comment says why there are two).
package perf
