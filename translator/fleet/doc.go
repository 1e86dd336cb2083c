// Package fleet holds one Gateway fleet's resources after they are
// emitted (package translator's emitFleet): the type, the patch a route
// change makes to its route configurations, and its own versions of the
// clusters its routes reach when its Gateway names a backend client
// certificate.
//
// It works on judged Gateways (package gateway) and the emitter's output
// (package envoy); it judges nothing and never reads BackendTLSPolicies or
// Services (backendtls, upstream): the engine says which clusters a fleet
// reaches and what each was built from.
package fleet
