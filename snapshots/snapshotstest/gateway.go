package snapshotstest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// Gateway is one Gateway with an HTTP and an HTTPS port, shaped as the
// translator shapes it: a listener per port, routes over RDS (ADS), the
// HTTPS chain's certificate over SDS (ADS).
type Gateway struct {
	Namespace, Name string
	HTTPPort        int
	HTTPSPort       int
	Hostname        string  // the HTTPS chain's server name and every route's domain
	Backend         Backend // the cluster every route goes to
	Key             string  // changes the certificate secret's content; the private key's marker
	// CertificateSecret, when set, names the certificate's SDS secret in
	// place of CertificateName's default.
	CertificateSecret string
}

// Fleet is the Gateway's fleet: `<namespace>/<name>`.
func (g Gateway) Fleet() string {
	return translator.GatewayFleet(types.NamespacedName{Namespace: g.Namespace, Name: g.Name})
}

// HTTPListenerName and HTTPSListenerName are `<ns>/<gw>/<port>`; the HTTP
// port's route configuration has its listener's name.
func (g Gateway) HTTPListenerName() string  { return fmt.Sprintf("%s/%d", g.Fleet(), g.HTTPPort) }
func (g Gateway) HTTPSListenerName() string { return fmt.Sprintf("%s/%d", g.Fleet(), g.HTTPSPort) }

// HTTPSRouteName is the HTTPS chain's route configuration:
// `<ns>/<gw>/<port>/<listener-name>`.
func (g Gateway) HTTPSRouteName() string { return g.HTTPSListenerName() + "/https" }

// CertificateName is the listener certificate's SDS secret:
// `Certificate/<secret-ns>/<secret-name>`.
func (g Gateway) CertificateName() string {
	if g.CertificateSecret != "" {
		return g.CertificateSecret
	}
	return plan.CertificateSecretName(g.Namespace, g.Name+"-cert")
}

// PrivateKey is the certificate secret's private key; tests look for it
// where it must never be.
func (g Gateway) PrivateKey() string {
	key := g.Key
	if key == "" {
		key = "fixture"
	}
	return "-----BEGIN PRIVATE KEY-----\n" + key + " key of " + g.Fleet() + "\n-----END PRIVATE KEY-----\n"
}

// WithGateways returns out with each Gateway's fleet resources added;
// out's own maps are not changed.
func WithGateways(out translator.Output, gateways ...Gateway) translator.Output {
	fleets := maps.Clone(out.Fleets)
	if fleets == nil {
		fleets = map[string]*translator.FleetResources{}
	}
	for _, g := range gateways {
		fleets[g.Fleet()] = g.Resources()
	}
	out.Fleets = fleets
	return out
}

// Resources are the Gateway's listeners, routes and certificate, sorted by
// name as the translator sorts them.
func (g Gateway) Resources() *translator.FleetResources {
	res := &translator.FleetResources{}
	if g.HTTPPort != 0 {
		res.Listeners = append(res.Listeners, g.HTTPListener())
		res.Routes = append(res.Routes, g.RouteConfiguration(g.HTTPListenerName()))
	}
	if g.HTTPSPort != 0 {
		res.Listeners = append(res.Listeners, g.HTTPSListener())
		res.Routes = append(res.Routes, g.RouteConfiguration(g.HTTPSRouteName()))
		res.Secrets = append(res.Secrets, g.Certificate())
	}
	sortByName(res.Listeners)
	sortByName(res.Routes)
	if g.Backend != (Backend{}) && len(res.Routes) > 0 {
		res.Reached = []string{g.Backend.ClusterName()} // where every route goes
	}
	return res
}

// HTTPListener reads its routes by RDS over ADS.
func (g Gateway) HTTPListener() *listenerv3.Listener {
	return &listenerv3.Listener{
		Name:         g.HTTPListenerName(),
		Address:      address(g.HTTPPort),
		FilterChains: []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{connectionManager(g.HTTPListenerName())}}},
	}
}

// HTTPSListener terminates TLS for Hostname with the certificate over SDS
// (ADS) and reads its routes by RDS over ADS.
func (g Gateway) HTTPSListener() *listenerv3.Listener {
	tls := &tlsv3.DownstreamTlsContext{CommonTlsContext: &tlsv3.CommonTlsContext{
		TlsCertificateSdsSecretConfigs: []*tlsv3.SdsSecretConfig{{Name: g.CertificateName(), SdsConfig: ads()}},
	}}
	return &listenerv3.Listener{
		Name:    g.HTTPSListenerName(),
		Address: address(g.HTTPSPort),
		FilterChains: []*listenerv3.FilterChain{{
			Name:             "https",
			FilterChainMatch: &listenerv3.FilterChainMatch{ServerNames: []string{g.Hostname}},
			Filters:          []*listenerv3.Filter{connectionManager(g.HTTPSRouteName())},
			TransportSocket: &corev3.TransportSocket{
				Name:       "envoy.transport_sockets.tls",
				ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: deterministicAny(tls)},
			},
		}},
	}
}

// RouteConfiguration sends every request for Hostname to the backend.
func (g Gateway) RouteConfiguration(name string) *routev3.RouteConfiguration {
	return &routev3.RouteConfiguration{
		Name: name,
		VirtualHosts: []*routev3.VirtualHost{{
			Name:    g.Hostname,
			Domains: []string{g.Hostname},
			Routes: []*routev3.Route{{
				Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
				Action: &routev3.Route_Route{Route: &routev3.RouteAction{
					ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: g.Backend.ClusterName()},
				}},
			}},
		}},
	}
}

// Certificate is the HTTPS listener's certificate and private key, inline.
func (g Gateway) Certificate() *tlsv3.Secret {
	return &tlsv3.Secret{
		Name: g.CertificateName(),
		Type: &tlsv3.Secret_TlsCertificate{TlsCertificate: &tlsv3.TlsCertificate{
			CertificateChain: &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{
				InlineString: "-----BEGIN CERTIFICATE-----\nfixture for " + g.Hostname + "\n-----END CERTIFICATE-----\n",
			}},
			PrivateKey: &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: g.PrivateKey()}},
		}},
	}
}

func connectionManager(routeConfig string) *listenerv3.Filter {
	router := deterministicAny(&routerv3.Router{})
	hcm := &hcmv3.HttpConnectionManager{
		StatPrefix: "gateway",
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			ConfigSource: ads(), RouteConfigName: routeConfig,
		}},
		HttpFilters: []*hcmv3.HttpFilter{{
			Name: "envoy.filters.http.router", ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: router},
		}},
	}
	return &listenerv3.Filter{
		Name:       "envoy.filters.network.http_connection_manager",
		ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: deterministicAny(hcm)},
	}
}

func address(port int) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address: translator.DefaultListenerAddress, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: uint32(port)},
	}}}
}

func sortByName[T interface{ GetName() string }](items []T) {
	slices.SortFunc(items, func(a, b T) int { return strings.Compare(a.GetName(), b.GetName()) })
}
