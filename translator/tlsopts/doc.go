// Package tlsopts owns BackendTLSPolicy spec.options: the tlsplane.io/
// keys, Gateway API's limits on them, the tables of cipher, curve and
// signature-algorithm names Envoy 1.40 accepts, and Parse with its memo.
// Both judging (backendtls) and emitting (envoy) read its Options, so it
// imports no Kubernetes or Gateway API types and nothing of the translator.
package tlsopts
