// Package backendtls owns every BackendTLSPolicy rule: a policy's verdict
// (its options, trust and SANs, as a plan.UpstreamTLS), its attachments to
// Services and their precedence, its status and ancestors, and the CA
// expiry warning. It judges; it never builds Envoy protos: it must not
// import the emitter (translator/envoy) or go-control-plane.
package backendtls
