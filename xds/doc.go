// Package xds is tlsplane's gRPC ADS server: state-of-the-world and delta
// xDS on one port, serving the snapshots package's cache, with stream
// callbacks for NACK detection, NACK-loop suppression and metrics, and the
// channel's security: mutual TLS from reloaded files, and a fleet identity
// rule checked on every request before go-control-plane creates a watch.
//
// It knows nothing about Kubernetes or policies beyond the names the
// publisher hands back for a rejected resource; it never builds or edits
// Envoy resources.
package xds
