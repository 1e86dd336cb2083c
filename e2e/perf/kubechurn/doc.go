// Package kubechurn measures tlsplane in Kubernetes mode against a real
// kube-apiserver and etcd (package e2e/apiserver): N Services with
// BackendTLSPolicies, CA ConfigMaps and EndpointSlices created through
// client-go, the tlsplane binary watching them, a real delta Envoy.
//
// BenchmarkEndpointChurn (issue 15) updates the EndpointSlices at a fixed
// rate; each update's arrival is timed on a delta ADS stream over real
// gRPC, and the real Envoy, connected throughout, is checked at the end to
// hold every final endpoint.
//
// BenchmarkIdleEdits (issue 23) makes one edit at a time in an idle world
// (a CA rotation, a policy edit, an EndpointSlice change) and times each
// from its API call to Envoy applying it, by Envoy's own update_time
// stamps, split into the API server's watch delivery, tlsplane's part and
// Envoy's.
//
// BenchmarkKubeColdStart (issue 37) creates every object before tlsplane
// starts, as a ServiceAccount, against an API server with priority and
// fairness on, and times each policy's first status from that start, with
// another ServiceAccount's LIST latency before and during.
//
// They are benchmarks only (`make bench`), never part of `make test`, and
// a package of their own because they own an API server.
package kubechurn
