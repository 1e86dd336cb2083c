package snapshots

import (
	"fmt"
	"maps"
	"slices"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// checkConsistent is the gate before SetSnapshot: go-control-plane's own
// check (EDS references), plus SDS, which it does not check. In ADS mode
// the cache withholds an SDS reply that holds a secret Envoy did not ask
// for, and a cluster whose secret is missing stays warming forever.
func checkConsistent(d *digests, s *servedSnapshot) error {
	if err := s.Consistent(); err != nil {
		return err
	}
	secrets := s.GetResources(resource.SecretType)
	clusters := s.GetResources(resource.ClusterType)
	referenced := map[string]bool{}
	for _, r := range sortedNames(clusters) {
		dg, err := d.of(clusters[r])
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
	for _, name := range sortedNames(secrets) {
		if !referenced[name] {
			return fmt.Errorf("secret %s: referenced by no cluster (ADS would withhold the SDS reply)", name)
		}
	}
	return nil
}

// referencedSecrets lists the SDS secrets a cluster asks for over ADS, in
// its transport socket and its transport socket matches.
func referencedSecrets(c *clusterv3.Cluster) ([]string, error) {
	sockets := []*corev3.TransportSocket{c.GetTransportSocket()}
	for _, m := range c.GetTransportSocketMatches() {
		sockets = append(sockets, m.GetTransportSocket())
	}
	var names []string
	for _, ts := range sockets {
		cfg := ts.GetTypedConfig()
		if cfg == nil || !cfg.MessageIs((*tlsv3.UpstreamTlsContext)(nil)) {
			continue
		}
		tls := &tlsv3.UpstreamTlsContext{}
		if err := cfg.UnmarshalTo(tls); err != nil {
			return nil, fmt.Errorf("cluster %s: transport_socket %s: %w", c.GetName(), ts.GetName(), err)
		}
		common := tls.GetCommonTlsContext()
		configs := append([]*tlsv3.SdsSecretConfig{
			common.GetValidationContextSdsSecretConfig(),
			common.GetCombinedValidationContext().GetValidationContextSdsSecretConfig(),
		}, common.GetTlsCertificateSdsSecretConfigs()...)
		for _, sds := range configs {
			// Secrets from another config source are not ours to serve.
			if sds.GetName() != "" && sds.GetSdsConfig().GetAds() != nil {
				names = append(names, sds.GetName())
			}
		}
	}
	return names, nil
}

// sortedNames keeps error messages deterministic.
func sortedNames[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
