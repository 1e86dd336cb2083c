package backendcerts

import (
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
)

// defaultPreferred is tlsplane's maximum version when a policy sets none
// (tlsopts: tlsplane.io/maximumVersion defaults to TLSv1_3).
const defaultPreferred = "TLSv1.3"

// versionRank orders the versions as Envoy's %UPSTREAM_TLS_VERSION% names
// them; an unknown name is never below anything.
var versionRank = map[string]int{"TLSv1": 1, "TLSv1.1": 2, "TLSv1.2": 3, "TLSv1.3": 4}

// envoyNames are the names of tls_params' versions as Envoy logs them.
var envoyNames = map[tlsv3.TlsParameters_TlsProtocol]string{
	tlsv3.TlsParameters_TLSv1_0: "TLSv1", tlsv3.TlsParameters_TLSv1_1: "TLSv1.1",
	tlsv3.TlsParameters_TLSv1_2: "TLSv1.2", tlsv3.TlsParameters_TLSv1_3: "TLSv1.3",
}

// below reports whether negotiated is a lower version than preferred.
func below(negotiated, preferred string) bool {
	n, ok := versionRank[negotiated]
	p, pok := versionRank[preferred]
	return ok && pok && n < p
}

// preference is a cluster's preferred version, read from the cluster it
// was read from (the translator reuses an unchanged cluster's message, so
// the pointer says when to read again).
type preference struct {
	from    *clusterv3.Cluster
	version string
}

// SeeClusters is the translation's clusters (pipeline.ClusterConditions),
// read-only, handed over before Apply: the maximum TLS version each
// allows is what its policy (option tlsplane.io/maximumVersion, or its
// profile) prefers a backend to negotiate.
func (inv *Inventory) SeeClusters(clusters []*clusterv3.Cluster) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.clusters = clusters
}

// preferredVersions reads the preferred version of the clusters in
// wanted from the last translation's clusters; inv.mu held. What was read
// before is kept for the clusters that still exist (the policies' and the
// XBackends' are asked for in turn), and read again when the cluster's
// message changed.
func (inv *Inventory) preferredVersions(wanted map[string]bool) map[string]string {
	out := make(map[string]string, len(wanted))
	next := make(map[string]preference, len(inv.preferred)+len(wanted))
	for _, c := range inv.clusters {
		name := c.GetName()
		p, cached := inv.preferred[name]
		if !wanted[name] {
			if cached {
				next[name] = p
			}
			continue
		}
		if !cached || p.from != c {
			p = preference{from: c, version: maximumVersion(c)}
		}
		next[name], out[name] = p, p.version
	}
	inv.preferred = next
	return out
}

// maximumVersion is the cluster's tls_params maximum, Envoy's name for it;
// defaultPreferred when it sets none or has no TLS.
func maximumVersion(c *clusterv3.Cluster) string {
	ts := c.GetTransportSocket().GetTypedConfig()
	if ts == nil {
		return defaultPreferred
	}
	var tls tlsv3.UpstreamTlsContext
	if err := ts.UnmarshalTo(&tls); err != nil {
		return defaultPreferred
	}
	if name, ok := envoyNames[tls.GetCommonTlsContext().GetTlsParams().GetTlsMaximumProtocolVersion()]; ok {
		return name
	}
	return defaultPreferred
}
