// Package faults is the end-to-end proof that tlsplane degrades safely: a
// real Envoy 1.40 carries requests to real HTTPS echo backends
// (examples/backend) while tlsplane is killed with SIGKILL, flooded with
// policy edits, sent a cluster Envoy rejects, or given an unreadable or
// full --dir. It starts every process itself, all on loopback: tlsplane,
// Envoy (the binaries as e2e/harness finds them) and the echo backend.
package faults
