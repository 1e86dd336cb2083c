// Package translator turns Gateway API BackendTLSPolicies, and the Services,
// EndpointSlices, ConfigMaps and Secrets they refer to, into Envoy clusters,
// endpoints and SDS secrets, plus the status each policy should carry.
//
// It owns every BackendTLSPolicy rule and is the only place Envoy protos are
// built. It must stay pure: no I/O, no goroutines, no clock but the `now`
// passed in, no globals that change, and deterministic, sorted output.
package translator
