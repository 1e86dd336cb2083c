// Package conformance runs the upstream Gateway API conformance suite
// (sigs.k8s.io/gateway-api/conformance, unmodified, through its own
// RunConformanceWithOptions) against tlsplane in Kubernetes mode: a real
// kube-apiserver and kube-controller-manager, the e2e node agent running
// the suite's backends (echo-basic, CoreDNS) as processes in network
// namespaces, and one real Envoy per Gateway (package e2e/node).
//
// `make conformance` runs it and then cmd/ratchet, which reads the run and
// the report, prints a per-test summary and fails only when a test of the
// committed list passing.txt did not pass.
package conformance
