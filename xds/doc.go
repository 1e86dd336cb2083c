// Package xds is tlsplane's gRPC ADS server: state-of-the-world and delta
// xDS, from one stream loop over the snapshots package's per-fleet feeds
// (stream.go: an update or a request costs a stream its changes, not its
// subscription, and every stream sends the same encoded bytes, wire.go);
// what the flavours do differently with a request and a response is in
// sotw.go and delta.go, their subscriptions in sotwsub.go and
// deltasub.go. Both share the stream callbacks for NACK detection and reports,
// each stream's progress per type for `tlsplane status` (connections.go),
// and metrics, and the channel's security: mutual TLS from reloaded files,
// and a fleet identity rule checked on every request before it is
// answered. The port itself is bounded before gRPC sees a connection
// (admission.go, limitlistener.go): connections in total and per client
// address, handshakes with a deadline and a budget of their own whose
// oldest member gives way to a newcomer, so clients that never
// authenticate cannot take the file descriptors or memory Envoys need.
//
// It knows nothing about Kubernetes or policies beyond the names the
// publisher hands back for a rejected resource; it never builds or edits
// Envoy resources.
package xds
