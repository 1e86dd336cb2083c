// Package perf measures propagation with a real Envoy: tlsplane serve
// --dir with N policy-targeted Services, Envoy on ADS, and a series of
// edits (CA rotations and policy edits), each timed from the file write to
// Envoy's stats showing it applied. It is run by `make bench`, never by
// `make test`: TestPropagation skips unless -perf.propagation is given.
package perf
