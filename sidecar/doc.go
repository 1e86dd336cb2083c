// Package sidecar owns the static bootstrap of a mesh sidecar Envoy
// (docs/mesh.md): ADS to tlsplane as its namespace's mesh fleet, the
// capture listener that hands each redirected connection to the xDS
// listener of its original destination, and the passthrough that forwards
// every other connection unchanged. It builds configuration only: no
// I/O, no network namespace (that is package capture).
package sidecar
