// Package trafficpolicy judges XBackendTrafficPolicies (GEP-4894's
// companion, gateway.networking.x-k8s.io/v1alpha1): which policy governs
// each Service and XBackend (the oldest valid one; the others are
// Conflicted there), what it asks of Envoy (a retry budget on the
// backend's clusters, session persistence on the routes sending to it, as
// plan values), and each policy's status with one ancestor per Gateway
// reaching its targets.
//
// The API server's defaults are applied here (a directory of manifests
// gets none), and what the API server would refuse is refused here.
//
// It is pure judging: it reads input objects and writes plans and
// statuses; it must not import the emitter (envoy), the Gateway or route
// rules, or the engine.
package trafficpolicy
