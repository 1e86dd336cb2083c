// Package plan is the translator's intermediate representation: what
// judging decides and the emitter turns into Envoy protos. Clusters,
// upstream TLS, CA bundles, endpoints, listeners, route tables and virtual
// hosts, and the naming contract. Plans hold plain values: no Kubernetes or
// Gateway API objects, no built protos (tlsopts.Options carries Envoy's TLS
// version enum), no pointers back into judging state. It imports only
// tlsopts.
package plan
