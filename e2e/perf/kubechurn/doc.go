// Package kubechurn measures endpoint churn in Kubernetes mode (issue 15):
// a real kube-apiserver and etcd (package e2e/apiserver), the tlsplane
// binary watching them, N Services with BackendTLSPolicies, and their
// EndpointSlices updated through client-go at a fixed rate. Each update's
// arrival is timed on a delta ADS stream over real gRPC, and a real delta
// Envoy, connected throughout, is checked at the end to hold every final
// endpoint. It is a benchmark only (`make bench`), never part of
// `make test`, and a package of its own because it owns an API server.
package kubechurn
