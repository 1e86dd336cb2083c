// Package snapshots turns one translator.Output into a go-control-plane
// snapshot per Envoy fleet: content-hash versions per resource type,
// per-fleet namespace filtering, and a consistency check before anything is
// set, so an inconsistent translation never replaces what Envoy is served.
// Each fleet's Feed carries the same content to delta streams as a log of
// changes by generation. A Gateway fleet (translator.Output.Fleets) is
// served, on top of what every fleet shares, its own listeners, route
// configurations and listener certificates, whose private keys no other
// fleet's snapshot, feed or debug dump ever holds.
//
// It owns the fleets' snapshots and feeds. It must not talk to Kubernetes, translate
// policies, or run a gRPC server (that is package xds).
package snapshots
