package node

// AgentOption changes what the agent gives every Pod it runs.
type AgentOption func(*Agent)

// WithClusterDNS makes address (a ClusterDNS's Address) the nameserver of
// the Pods' resolv.conf, written as the kubelet writes it for each
// dnsPolicy (podDNS); without it Pods see the node's resolv.conf.
func WithClusterDNS(address string) AgentOption {
	return func(a *Agent) { a.clusterDNS = address }
}

// WithServiceCIDR routes cidr (the API server's
// --service-cluster-ip-range) from every Pod to the bridge's gateway, so
// a connection to a cluster IP is routable and a sidecar's capture can
// redirect it.
func WithServiceCIDR(cidr string) AgentOption {
	return func(a *Agent) { a.serviceCIDR = cidr }
}
