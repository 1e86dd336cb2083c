// Package handshakes turns the upstream TLS counters Envoys report on the
// metrics service into a condition on the policies that govern the
// clusters: tlsplane.io/HandshakesSucceeding.
//
// It owns the per-cluster, per-fleet windows of counter increases and the
// condition and metric built from them. It reads the translator's origins
// (cluster → policies) but never translates; it talks to neither Envoy
// nor the API server: the xDS server feeds it reports, and the pipeline
// asks it for conditions after each translation.
package handshakes
