package snapshots

import (
	"fmt"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
)

// listenerRefs are the resources a listener asks for over ADS: the route
// configurations its HTTP connection managers read by RDS, and the SDS
// secrets its downstream TLS contexts read. A listener waits (warms) until
// Envoy has them all, so each must be in the fleet's snapshot.
type listenerRefs struct {
	routes, secrets []string
}

// referencesOf reads a listener's RDS and SDS references in every filter
// chain, the default one included. References to another config source are
// not ours to serve, so they are not listed.
func referencesOf(l *listenerv3.Listener) (listenerRefs, error) {
	chains := l.GetFilterChains()
	if d := l.GetDefaultFilterChain(); d != nil {
		chains = append(chains[:len(chains):len(chains)], d)
	}
	var refs listenerRefs
	for _, chain := range chains {
		for _, f := range chain.GetFilters() {
			cfg := f.GetTypedConfig()
			if cfg == nil || !cfg.MessageIs((*hcmv3.HttpConnectionManager)(nil)) {
				continue
			}
			hcm := &hcmv3.HttpConnectionManager{}
			if err := cfg.UnmarshalTo(hcm); err != nil {
				return listenerRefs{}, fmt.Errorf("listener %s: filter chain %q: filter %s: %w", l.GetName(), chain.GetName(), f.GetName(), err)
			}
			if rds := hcm.GetRds(); rds.GetRouteConfigName() != "" && rds.GetConfigSource().GetAds() != nil {
				refs.routes = append(refs.routes, rds.GetRouteConfigName())
			}
		}
		cfg := chain.GetTransportSocket().GetTypedConfig()
		if cfg == nil || !cfg.MessageIs((*tlsv3.DownstreamTlsContext)(nil)) {
			continue
		}
		tls := &tlsv3.DownstreamTlsContext{}
		if err := cfg.UnmarshalTo(tls); err != nil {
			return listenerRefs{}, fmt.Errorf("listener %s: filter chain %q: transport_socket: %w", l.GetName(), chain.GetName(), err)
		}
		refs.secrets = appendADSSecrets(refs.secrets, tls.GetCommonTlsContext())
	}
	return refs, nil
}

// appendADSSecrets appends the SDS secrets a TLS context reads over ADS:
// its certificates and its validation context, plain or combined.
func appendADSSecrets(names []string, common *tlsv3.CommonTlsContext) []string {
	add := func(sds *tlsv3.SdsSecretConfig) {
		// Secrets from another config source are not ours to serve.
		if sds.GetName() != "" && sds.GetSdsConfig().GetAds() != nil {
			names = append(names, sds.GetName())
		}
	}
	add(common.GetValidationContextSdsSecretConfig())
	add(common.GetCombinedValidationContext().GetValidationContextSdsSecretConfig())
	for _, sds := range common.GetTlsCertificateSdsSecretConfigs() {
		add(sds)
	}
	return names
}
