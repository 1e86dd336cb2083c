// Package snapshots turns one translator.Output into a go-control-plane
// snapshot per Envoy fleet: content-hash versions per resource type,
// per-fleet scoping, and a consistency check before anything is set, so an
// inconsistent translation never replaces what Envoy is served. Each
// fleet's Feed carries the same content to delta streams as a log of
// changes by generation.
//
// A fleet receives only what it uses (scope.go). A Gateway fleet
// (translator.Output.Fleets) is served the clusters its routes reach
// (FleetResources.Reached), the load assignments and secrets they read,
// and its own listeners, route configurations and listener certificates,
// whose private keys no other fleet's snapshot, feed or debug dump ever
// holds. A fleet without a Gateway is served every cluster but those that
// read a private key (a BackendTLSPolicy's client certificate), unless
// --fleet-namespaces grants it their namespace (withheld.go). ScopeAll
// (--fleet-scope=all) serves such fleets everything, as before.
//
// It owns the fleets' snapshots and feeds. It must not talk to Kubernetes, translate
// policies, or run a gRPC server (that is package xds).
package snapshots
