// Package backendcerts keeps the inventory of the certificates backends
// presented to Envoy, as Envoys reported them (sampled upstream TLS
// connections, on the access log service), and turns it into a condition
// on the policies and XBackends that govern the clusters:
// tlsplane.io/BackendCertificatesValid.
//
// It owns the per (fleet, cluster, upstream host) entries, their retention
// and bound, the condition, the expiry metric and what a replica shares of
// them with its peers. It reads the translator's origins (cluster →
// policies) and clusters (the TLS versions they allow) but never
// translates; it talks to neither Envoy nor the API server: the xDS
// server's access log service feeds it sightings, and the pipeline asks it
// for conditions after each translation.
package backendcerts
