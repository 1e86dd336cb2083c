// Package xds is tlsplane's gRPC ADS server: state-of-the-world xDS from
// go-control-plane's server and the snapshots package's cache, and delta
// xDS from its own stream loop over the snapshots package's per-fleet
// feeds (delta.go: an update or a request costs a stream its changes, not
// its subscription). Both share the stream callbacks for NACK detection,
// NACK-loop suppression and metrics, and the channel's security: mutual
// TLS from reloaded files, and a fleet identity rule checked on every
// request before it is answered.
//
// It knows nothing about Kubernetes or policies beyond the names the
// publisher hands back for a rejected resource; it never builds or edits
// Envoy resources.
package xds
