package snapshots

import (
	"fmt"
	"maps"
	"slices"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// checkConsistent is the gate before a snapshot is served: go-control-plane's
// own check (EDS references), plus SDS, which it does not check. A cluster
// whose secret is missing stays warming forever, and a secret no cluster
// reads is a translation bug (go-control-plane's ADS cache, which served
// SotW before package xds did, withheld the SDS reply holding one).
func checkConsistent(d *digests, s *servedSnapshot) error {
	secrets := s.GetResources(resource.SecretType)
	clusters := s.GetResources(resource.ClusterType)
	endpoints := s.GetResources(resource.EndpointType)
	referenced := map[string]bool{}
	assigned := map[string]bool{}
	for _, r := range sortedNames(clusters) {
		c := clusters[r].(*clusterv3.Cluster)
		if isEDS(c) {
			if _, ok := endpoints[edsName(c)]; !ok {
				return fmt.Errorf("cluster %s: reads load assignment %q, which is not in the snapshot", c.GetName(), edsName(c))
			}
			assigned[edsName(c)] = true
		}
		dg, err := d.of(c)
		if err != nil {
			return err
		}
		for _, name := range dg.secrets {
			if _, ok := secrets[name]; !ok {
				return fmt.Errorf("cluster %s: references secret %q, which is not in the snapshot", dg.name, name)
			}
			referenced[name] = true
		}
	}
	for _, name := range sortedNames(endpoints) {
		if !assigned[name] {
			return fmt.Errorf("load assignment %s: read by no EDS cluster", name)
		}
	}
	for _, name := range sortedNames(secrets) {
		if !referenced[name] {
			return fmt.Errorf("secret %s: referenced by no cluster and no listener (ADS would withhold the SDS reply)", name)
		}
	}
	return nil
}

// checkListeners is the gate for a Gateway fleet's own resources, on top
// of checkConsistent of its base (whose secrets clusters reference): every
// route configuration and SDS secret a listener or an own cluster reads is
// served, every route configuration is read by a listener and every own
// secret by a listener or an own cluster (ADS withholds a reply holding
// what Envoy did not ask for), and no name is served twice.
func checkListeners(part fleetPart, baseSecrets map[string]types.Resource) error {
	for _, kind := range []struct {
		name  string
		items []*digest
	}{{"listener", part.listeners}, {"route configuration", part.routes}, {"secret", part.secrets}} {
		for i := 1; i < len(kind.items); i++ { // sorted by name
			if kind.items[i].name == kind.items[i-1].name {
				return fmt.Errorf("%s %s: twice in the fleet's resources", kind.name, kind.items[i].name)
			}
		}
	}
	routes := make(map[string]bool, len(part.routes))
	for _, r := range part.routes {
		routes[r.name] = false
	}
	own := make(map[string]bool, len(part.secrets))
	for _, s := range part.secrets {
		if _, ok := baseSecrets[s.name]; ok {
			return fmt.Errorf("secret %s: is both a listener certificate and a secret the clusters read", s.name)
		}
		own[s.name] = false
	}
	var missing []string
	for name := range part.clusterReads {
		_, ours := own[name]
		if _, theirs := baseSecrets[name]; !ours && !theirs {
			missing = append(missing, name)
		}
		if ours {
			own[name] = true
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("the fleet's own clusters reference secret %q, which is not in the snapshot", missing[0])
	}
	for _, l := range part.listeners {
		for _, name := range l.listener.routes {
			if _, ok := routes[name]; !ok {
				return fmt.Errorf("listener %s: references route configuration %q, which is not in the snapshot", l.name, name)
			}
			routes[name] = true
		}
		for _, name := range l.listener.secrets {
			_, ours := own[name]
			if _, theirs := baseSecrets[name]; !ours && !theirs {
				return fmt.Errorf("listener %s: references secret %q, which is not in the snapshot", l.name, name)
			}
			if ours {
				own[name] = true
			}
		}
	}
	for _, name := range sortedNames(routes) {
		if !routes[name] {
			return fmt.Errorf("route configuration %s: referenced by no listener (ADS would withhold the RDS reply)", name)
		}
	}
	for _, name := range sortedNames(own) {
		if !own[name] {
			return fmt.Errorf("secret %s: referenced by no cluster and no listener (ADS would withhold the SDS reply)", name)
		}
	}
	return nil
}

// referencedSecrets lists the SDS secrets a cluster asks for over ADS, in
// its transport socket and its transport socket matches.
func referencedSecrets(c *clusterv3.Cluster) ([]string, error) {
	contexts, err := upstreamTLSContexts(c)
	if err != nil {
		return nil, err
	}
	return secretsOf(contexts), nil
}

// secretsOf names the ADS secrets the contexts read.
func secretsOf(contexts []*tlsv3.UpstreamTlsContext) []string {
	var names []string
	for _, tls := range contexts {
		names = appendADSSecrets(names, tls.GetCommonTlsContext())
	}
	return names
}

// upstreamTLSContexts decodes c's upstream TLS contexts (its transport
// socket's and its matches'), once for everything a digest reads of them.
func upstreamTLSContexts(c *clusterv3.Cluster) ([]*tlsv3.UpstreamTlsContext, error) {
	sockets := []*corev3.TransportSocket{c.GetTransportSocket()}
	for _, m := range c.GetTransportSocketMatches() {
		sockets = append(sockets, m.GetTransportSocket())
	}
	var out []*tlsv3.UpstreamTlsContext
	for _, ts := range sockets {
		cfg := ts.GetTypedConfig()
		if cfg == nil || !cfg.MessageIs((*tlsv3.UpstreamTlsContext)(nil)) {
			continue
		}
		tls := &tlsv3.UpstreamTlsContext{}
		if err := cfg.UnmarshalTo(tls); err != nil {
			return nil, fmt.Errorf("cluster %s: transport_socket %s: %w", c.GetName(), ts.GetName(), err)
		}
		out = append(out, tls)
	}
	return out, nil
}

// sortedNames keeps error messages deterministic.
func sortedNames[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// isEDS: the cluster reads its endpoints over EDS.
func isEDS(c *clusterv3.Cluster) bool {
	return c.GetType() == clusterv3.Cluster_EDS
}
