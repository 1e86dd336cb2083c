// Package statuswriter writes the translator's statuses to the API server
// (the status subresource): BackendTLSPolicy ancestors and the parents of
// this controller on routes of every route kind (translator.RouteKinds,
// whose descriptions say where each keeps its status; routeclient.go holds
// the one typed client per kind) and on XBackends, the ancestors of
// XBackendTrafficPolicies (xkinds.go, with the typed apisx clients),
// keeping every other controller's entries as they are on the live
// object, and the whole
// status of GatewayClasses, Gateways and ListenerSets of this controller. It writes only
// what differs from the informers' copy, retries conflicts, rate-limits per
// object, and, with leader election, writes only while it holds the Lease.
//
// A report costs what changed since the last one (plus one walk of a map
// that changed); a status of ours that someone else overwrote is written
// back when the informers tell of it (LiveChanges), with no translation.
//
// It computes no status: that is the translator's job.
package statuswriter
