// Package faults is the end-to-end proof that tlsplane degrades safely: a
// real Envoy 1.40 carries requests to real HTTPS echo backends
// (examples/backend) while tlsplane is killed with SIGKILL, flooded with
// policy edits, sent a cluster Envoy rejects, or given an unreadable or
// full --dir. It uses only the standard library and starts every process
// itself: $TLSPLANE_BIN, $ENVOY_BIN and the echo backend, all on loopback.
package faults
