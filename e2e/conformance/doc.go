// Package conformance runs the upstream Gateway API conformance suite
// (sigs.k8s.io/gateway-api/conformance, unmodified, through its own
// RunConformanceWithOptions) against tlsplane in Kubernetes mode: a real
// kube-apiserver and kube-controller-manager, the e2e node agent running
// the suite's backends (echo-basic, CoreDNS) as processes in network
// namespaces, and one real Envoy per Gateway (package e2e/node).
//
// GATEWAY_API_CHANNEL picks the release channel whose CRDs the API server
// gets (standard by default, or experimental); tlsplane runs with the same
// --gateway-api-channel. `make conformance` runs it once per channel and
// then the ratchet (conformance/ratchet), which reads the run, prints a
// per-test summary and fails only when a test of the committed lists did
// not pass: passing.txt on every channel, passing-experimental.txt beside
// it on the experimental one.
package conformance
