package translator_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// TestEnvoyAcceptsGatewayConfiguration puts a Gateway fleet's listeners
// (RDS and SDS over ADS, as served) and each of its route configurations
// (inline, one listener each) to Envoy 1.40's `--mode validate`.
func TestEnvoyAcceptsGatewayConfiguration(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Envoy; skipped with -short")
	}
	in := gatewayInputs(t, gatewayWorld)
	in.Secrets = append(in.Secrets, translatortest.TLSSecret(t, "shop", "edge-cert", "*.shop.example"))
	envoyValidatesFleet(t, in, "shop/edge")
}

// envoyValidatesFleet translates in and validates fleet's listeners and
// route configurations with Envoy; each route configuration is probed
// inline behind the HTTP filters its served listener has.
func envoyValidatesFleet(t *testing.T, in translator.Inputs, name string) {
	t.Helper()
	envoy := translator.EnvoyBinary(t)
	out := translator.Translate(in, nil, time.Now(), translator.Options{ListenerAddress: "127.0.0.1"})
	fleet := out.Fleets[name]
	if fleet == nil || len(fleet.Listeners) == 0 || len(fleet.Routes) == 0 {
		t.Fatalf("no Gateway configuration to validate: %+v", fleet)
	}
	static := &bootstrapv3.Bootstrap_StaticResources{Listeners: fleet.Listeners, Clusters: []*clusterv3.Cluster{xdsCluster()}}
	filters := servedHTTPFilters(t, fleet.Listeners[0])
	for i, served := range fleet.Routes {
		// Served over RDS, a route configuration names clusters Envoy may
		// not hold yet; inline, Envoy would check them unless told not to.
		rc := proto.Clone(served).(*routev3.RouteConfiguration)
		rc.ValidateClusters = wrapperspb.Bool(false)
		hcm, err := anypb.New(&hcmv3.HttpConnectionManager{
			StatPrefix:     fmt.Sprintf("probe%d", i),
			RouteSpecifier: &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: rc},
			HttpFilters:    filters,
		})
		if err != nil {
			t.Fatal(err)
		}
		static.Listeners = append(static.Listeners, &listenerv3.Listener{
			Name:         "probe/" + rc.Name,
			Address:      socket("127.0.0.1", uint32(20000+i)),
			FilterChains: []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{{Name: "envoy.filters.network.http_connection_manager", ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: hcm}}}}},
		})
	}
	envoyValidates(t, envoy, "shop/edge", static)
}

// envoyValidates puts static resources, beside an ADS config source, to
// Envoy's `--mode validate` as the node of fleet, and fails t with what
// Envoy says when it refuses them.
func envoyValidates(t *testing.T, envoy, fleet string, static *bootstrapv3.Bootstrap_StaticResources) {
	t.Helper()
	bootstrap := &bootstrapv3.Bootstrap{
		Node:            &corev3.Node{Id: "probe", Cluster: fleet},
		StaticResources: static,
		DynamicResources: &bootstrapv3.Bootstrap_DynamicResources{AdsConfig: &corev3.ApiConfigSource{
			ApiType:             corev3.ApiConfigSource_GRPC,
			TransportApiVersion: corev3.ApiVersion_V3,
			GrpcServices:        []*corev3.GrpcService{{TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: "xds"}}}},
		}},
	}
	path := writeBootstrap(t, t.TempDir(), bootstrap)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, envoy, "--mode", "validate", "--disable-hot-restart", "--log-level", "error", "-c", path).CombinedOutput(); err != nil {
		t.Fatalf("Envoy rejects the configuration of fleet %s: %v\n%s", fleet, err, out)
	}
}

// writeBootstrap writes b as JSON into dir, for Envoy's -c.
func writeBootstrap(t *testing.T, dir string, b *bootstrapv3.Bootstrap) string {
	t.Helper()
	j, err := protojson.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "bootstrap.json")
	if err := os.WriteFile(path, j, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// servedHTTPFilters are the HTTP filters of l's first connection manager.
func servedHTTPFilters(t *testing.T, l *listenerv3.Listener) []*hcmv3.HttpFilter {
	t.Helper()
	for _, chain := range l.FilterChains {
		for _, f := range chain.Filters {
			hcm := &hcmv3.HttpConnectionManager{}
			if f.GetTypedConfig().MessageIs(hcm) {
				if err := f.GetTypedConfig().UnmarshalTo(hcm); err != nil {
					t.Fatal(err)
				}
				return hcm.HttpFilters
			}
		}
	}
	t.Fatalf("listener %s has no HTTP connection manager", l.Name)
	return nil
}

func xdsCluster() *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 "xds",
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC},
		ConnectTimeout:       durationpb.New(time.Second),
		Http2ProtocolOptions: &corev3.Http2ProtocolOptions{},
		LoadAssignment: &endpointv3.ClusterLoadAssignment{ClusterName: "xds", Endpoints: []*endpointv3.LocalityLbEndpoints{{
			LbEndpoints: []*endpointv3.LbEndpoint{{HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{Address: socket("127.0.0.1", 1)}}}},
		}}},
	}
}

func socket(ip string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address: ip, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
	}}}
}
