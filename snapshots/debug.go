package snapshots

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// ErrNotReady is returned by DebugSnapshot before the first Publish.
var ErrNotReady = errors.New("no snapshot published yet")

// DebugSnapshot returns, as JSON shaped like Envoy's /config_dump
// (envoy.admin.v3.ConfigDump), what a node is served. nodeID is a
// connected node's ID, or else taken as a fleet name, so an operator can
// also see what a fleet would get before any of its nodes connects.
func (p *Publisher) DebugSnapshot(nodeID string) ([]byte, error) {
	p.mu.Lock()
	fleet := nodeID
	if n, ok := p.nodes[nodeID]; ok {
		fleet = n.fleet
	}
	var snap *servedSnapshot
	if st := p.fleets[fleet]; st != nil {
		snap = st.snapshot
	}
	var err error
	if snap == nil && p.last != nil {
		snap, _, err = p.snapshotFor(*p.last, fleet, p.whole, nil)
	}
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if snap == nil {
		return nil, ErrNotReady
	}
	return configDump(snap)
}

// configDump renders a snapshot the way Envoy's admin renders what it got.
func configDump(snap *servedSnapshot) ([]byte, error) {
	clusters := &adminv3.ClustersConfigDump{VersionInfo: snap.GetVersion(resource.ClusterType)}
	items := snap.GetResources(resource.ClusterType)
	for _, name := range sortedNames(items) {
		c := items[name].(*clusterv3.Cluster)
		clusters.DynamicActiveClusters = append(clusters.DynamicActiveClusters, &adminv3.ClustersConfigDump_DynamicCluster{
			VersionInfo: clusters.VersionInfo, Cluster: mustAny(c),
		})
	}
	endpoints := &adminv3.EndpointsConfigDump{}
	items = snap.GetResources(resource.EndpointType)
	for _, name := range sortedNames(items) {
		e := items[name].(*endpointv3.ClusterLoadAssignment)
		endpoints.DynamicEndpointConfigs = append(endpoints.DynamicEndpointConfigs, &adminv3.EndpointsConfigDump_DynamicEndpointConfig{
			VersionInfo: snap.GetVersion(resource.EndpointType), EndpointConfig: mustAny(e),
		})
	}
	listeners := &adminv3.ListenersConfigDump{VersionInfo: snap.GetVersion(resource.ListenerType)}
	items = snap.GetResources(resource.ListenerType)
	for _, name := range sortedNames(items) {
		listeners.DynamicListeners = append(listeners.DynamicListeners, &adminv3.ListenersConfigDump_DynamicListener{
			Name: name,
			ActiveState: &adminv3.ListenersConfigDump_DynamicListenerState{
				VersionInfo: listeners.VersionInfo, Listener: mustAny(items[name].(*listenerv3.Listener)),
			},
		})
	}
	routes := &adminv3.RoutesConfigDump{}
	items = snap.GetResources(resource.RouteType)
	for _, name := range sortedNames(items) {
		routes.DynamicRouteConfigs = append(routes.DynamicRouteConfigs, &adminv3.RoutesConfigDump_DynamicRouteConfig{
			VersionInfo: snap.GetVersion(resource.RouteType), RouteConfig: mustAny(items[name].(*routev3.RouteConfiguration)),
		})
	}
	secrets := &adminv3.SecretsConfigDump{}
	items = snap.GetResources(resource.SecretType)
	for _, name := range sortedNames(items) {
		s := items[name].(*tlsv3.Secret)
		secrets.DynamicActiveSecrets = append(secrets.DynamicActiveSecrets, &adminv3.SecretsConfigDump_DynamicSecret{
			Name: name, VersionInfo: snap.GetVersion(resource.SecretType), Secret: mustAny(redacted(s)),
		})
	}
	dump := &adminv3.ConfigDump{Configs: []*anypb.Any{mustAny(clusters), mustAny(endpoints), mustAny(listeners), mustAny(routes), mustAny(secrets)}}
	raw, err := protojson.Marshal(dump)
	if err != nil {
		return nil, fmt.Errorf("config dump: %w", err)
	}
	// protojson output is unstable on purpose; re-indenting makes it stable.
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, fmt.Errorf("config dump: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// redacted hides private keys, as Envoy's own config dump does: a
// Gateway's listener certificates carry theirs inline. Only a CA bundle
// (a validation context: public) and a certificate chain are shown; key
// material of any other kind of secret is dropped whole.
func redacted(s *tlsv3.Secret) *tlsv3.Secret {
	switch s.GetType().(type) {
	case *tlsv3.Secret_ValidationContext, nil:
		return s
	case *tlsv3.Secret_TlsCertificate:
		c := proto.Clone(s).(*tlsv3.Secret)
		cert := c.GetTlsCertificate()
		cert.PrivateKey, cert.PrivateKeyProvider, cert.Password = nil, nil, nil
		return c
	}
	return &tlsv3.Secret{Name: s.GetName()}
}

// mustAny only fails for nil or unregistered messages, which these are not.
func mustAny(m proto.Message) *anypb.Any {
	a, err := anypb.New(m)
	if err != nil {
		panic(err)
	}
	return a
}
