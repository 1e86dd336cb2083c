package envoy

import (
	"fmt"
	"strings"

	"github.com/tlsplane/tlsplane/translator/plan"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	tlsinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Envoy extension names of the listener's filters.
const (
	hcmFilterName          = "envoy.filters.network.http_connection_manager"
	routerFilterName       = "envoy.filters.http.router"
	tlsInspectorFilterName = "envoy.filters.listener.tls_inspector"
)

// Listener builds and validates one Gateway port's listener: an HTTP connection
// manager per filter chain, its routes over RDS (ADS) and, on an HTTPS
// port, one chain per Gateway listener picked by SNI, its certificates over
// SDS (ADS).
func Listener(p *plan.Listener) (*listenerv3.Listener, error) {
	if p.UDP != nil {
		return udpListener(p)
	}
	l := &listenerv3.Listener{
		Name: p.Name,
		Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
			Address:       p.Address,
			PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: p.Port},
		}}},
	}
	if p.Captured {
		l.BindToPort = wrapperspb.Bool(false)
	}
	if p.HTTP != nil {
		hcm, err := connectionManager(p.Name, p.HTTP.Name, p.CertificateLog)
		if err != nil {
			return nil, err
		}
		l.FilterChains = []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{hcm}}}
		return l, l.ValidateAll()
	}
	if p.SNI() {
		inspector, err := anypb.New(&tlsinspectorv3.TlsInspector{})
		if err != nil {
			return nil, err
		}
		l.ListenerFilters = []*listenerv3.ListenerFilter{{
			Name:       tlsInspectorFilterName,
			ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: inspector},
		}}
	}
	for _, s := range p.Streams {
		chain, err := streamChain(p.Name, s, p.CertificateLog)
		if err != nil {
			return nil, err
		}
		l.FilterChains = append(l.FilterChains, chain)
	}
	for _, c := range p.Chains {
		hcm, err := connectionManager(p.Name+"/"+c.Listener, c.Routes.Name, p.CertificateLog)
		if err != nil {
			return nil, err
		}
		tls, err := anypb.New(downstreamTLSContext(c.CertSecrets, c.ClientValidation))
		if err != nil {
			return nil, err
		}
		chain := &listenerv3.FilterChain{
			Name:    c.Listener,
			Filters: []*listenerv3.Filter{hcm},
			TransportSocket: &corev3.TransportSocket{
				Name:       tlsTransportSocketName,
				ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: tls},
			},
		}
		if len(c.ServerNames) > 0 {
			chain.FilterChainMatch = &listenerv3.FilterChainMatch{ServerNames: c.ServerNames}
		}
		l.FilterChains = append(l.FilterChains, chain)
	}
	if len(l.FilterChains) == 0 {
		return nil, fmt.Errorf("listener %s: no filter chain", p.Name)
	}
	return l, l.ValidateAll()
}

// connectionManager is the HTTP connection manager of one route table;
// its router logs upstream certificates when log is set.
func connectionManager(statName, routeConfig string, log *plan.CertificateLog) (*listenerv3.Filter, error) {
	r := &routerv3.Router{}
	if log != nil {
		upstreamLog, err := routerUpstreamLog(log)
		if err != nil {
			return nil, err
		}
		r.UpstreamLog = upstreamLog
	}
	router, err := anypb.New(r)
	if err != nil {
		return nil, err
	}
	filters, err := corsFilters()
	if err != nil {
		return nil, err
	}
	session, err := statefulSessionFilter()
	if err != nil {
		return nil, err
	}
	filters = append(filters, session)
	hcm, err := anypb.New(&hcmv3.HttpConnectionManager{
		StatPrefix: statPrefix(statName),
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			ConfigSource:    adsConfigSource(),
			RouteConfigName: routeConfig,
		}},
		HttpFilters: append(filters, &hcmv3.HttpFilter{
			Name:       routerFilterName,
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: router},
		}),
		// A client's WebSocket upgrade goes through to the backend, as the
		// Gateway API expects of HTTP listeners (Envoy refuses it otherwise).
		UpgradeConfigs: []*hcmv3.HttpConnectionManager_UpgradeConfig{{UpgradeType: "websocket"}},
	})
	if err != nil {
		return nil, err
	}
	return &listenerv3.Filter{Name: hcmFilterName, ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: hcm}}, nil
}

// statPrefix keeps Envoy's stat names readable: dots would split them.
func statPrefix(name string) string {
	return strings.NewReplacer("/", "_", ".", "_").Replace(name)
}
