// Package envoy is the emitter: the only place Envoy protos are built. It
// turns plans (package plan) into validated clusters, upstream and
// downstream TLS, the fail-closed context, SDS secrets, load assignments,
// listeners and route configurations, and says what Envoy would reject as
// an error. It judges nothing: it imports plan and tlsopts, never a
// Kubernetes or Gateway API package, nor any judging package.
package envoy
