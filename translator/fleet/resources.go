package fleet

import (
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
)

// Resources is one Gateway's Envoy configuration. Each slice is sorted
// by name. Secrets hold private keys: they are served to this fleet only.
type Resources struct {
	Listeners []*listenerv3.Listener
	Routes    []*routev3.RouteConfiguration
	Secrets   []*tlsv3.Secret
	// Clusters are this fleet's own versions of clusters of the translation's clusters
	// (same names), served to it instead of those: the TLS clusters its
	// Gateway's routes reach, presenting the Gateway's backend client
	// certificate (spec.tls.backend.clientCertificateRef), or failing
	// closed when that certificate cannot be used.
	Clusters []*clusterv3.Cluster
	// Reached are the names of the clusters (of the translation's clusters) the
	// Gateway's accepted routes send traffic to, sorted: every cluster its
	// listeners and route configurations name, mirrors included. By
	// default the fleet is served these clusters alone, with the load
	// assignments and secrets they read. A name may have no cluster (a
	// Service port without endpoints yet): nothing is served for it.
	Reached []string
}
