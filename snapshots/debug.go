package snapshots

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
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
		snap, err = p.snapshotFor(*p.last, fleet, p.whole)
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
	secrets := &adminv3.SecretsConfigDump{}
	items = snap.GetResources(resource.SecretType)
	for _, name := range sortedNames(items) {
		s := items[name].(*tlsv3.Secret)
		secrets.DynamicActiveSecrets = append(secrets.DynamicActiveSecrets, &adminv3.SecretsConfigDump_DynamicSecret{
			Name: name, VersionInfo: snap.GetVersion(resource.SecretType), Secret: mustAny(redacted(s)),
		})
	}
	dump := &adminv3.ConfigDump{Configs: []*anypb.Any{mustAny(clusters), mustAny(endpoints), mustAny(secrets)}}
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

// redacted hides private keys, as Envoy's own config dump does.
func redacted(s *tlsv3.Secret) *tlsv3.Secret {
	if s.GetTlsCertificate().GetPrivateKey() == nil {
		return s
	}
	c := proto.Clone(s).(*tlsv3.Secret)
	c.GetTlsCertificate().PrivateKey = nil
	return c
}

// mustAny only fails for nil or unregistered messages, which these are not.
func mustAny(m proto.Message) *anypb.Any {
	a, err := anypb.New(m)
	if err != nil {
		panic(err)
	}
	return a
}
