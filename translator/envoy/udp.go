package envoy

import (
	xdscorev3 "github.com/cncf/xds/go/xds/core/v3"
	matcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	udpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/udp/udp_proxy/v3"
	networkinputsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/matching/common_inputs/network/v3"
	consistenthashingv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/matching/input_matchers/consistent_hashing/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// Envoy extension names of a UDP listener's parts.
const (
	udpProxyFilterName        = "envoy.filters.udp_listener.udp_proxy"
	udpRouteActionName        = "route"
	sourcePortInputName       = "envoy.matching.inputs.source_port"
	consistentHashMatcherName = "envoy.matching.input_matchers.consistent_hashing"
)

// udpListener is a UDP port's listener: the UDP proxy listener filter,
// sending each client session to one backend cluster.
func udpListener(p *plan.Listener) (*listenerv3.Listener, error) {
	matcher, err := udpMatcher(p.UDP.Backends)
	if err != nil {
		return nil, err
	}
	proxy, err := anypb.New(&udpproxyv3.UdpProxyConfig{
		StatPrefix:     statPrefix(p.Name + "/" + p.UDP.Name),
		RouteSpecifier: &udpproxyv3.UdpProxyConfig_Matcher{Matcher: matcher},
	})
	if err != nil {
		return nil, err
	}
	l := &listenerv3.Listener{
		Name: p.Name,
		Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
			Protocol:      corev3.SocketAddress_UDP,
			Address:       p.Address,
			PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: p.Port},
		}}},
		ListenerFilters: []*listenerv3.ListenerFilter{{
			Name:       udpProxyFilterName,
			ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: proxy},
		}},
	}
	return l, l.ValidateAll()
}

// udpMatcher picks a session's backend. The UDP proxy has no weighted
// clusters, so weights split the hash of the client's source port: the
// first backend takes [0, w0) of the total, the next [w0, w0+w1), and so
// on; a client keeps its backend for as long as it keeps its port. The
// consistent-hash matcher matches hash % total >= threshold, so the
// backends are tried last first, each from the sum of the weights before
// it, and the first takes what none matched.
func udpMatcher(backends []plan.WeightedBackend) (*matcherv3.Matcher, error) {
	if len(backends) == 0 {
		backends = []plan.WeightedBackend{{Weight: 1}} // drops every datagram
	}
	var total uint32
	for _, b := range backends {
		total += b.Weight
	}
	first, err := udpRouteTo(backends[0])
	if err != nil {
		return nil, err
	}
	m := &matcherv3.Matcher{OnNoMatch: first}
	if len(backends) == 1 || total == 0 {
		return m, nil
	}
	input, err := typedExtension(sourcePortInputName, &networkinputsv3.SourcePortInput{})
	if err != nil {
		return nil, err
	}
	list := &matcherv3.Matcher_MatcherList{}
	threshold := total
	for i := len(backends) - 1; i > 0; i-- {
		threshold -= backends[i].Weight
		if backends[i].Weight == 0 {
			continue
		}
		hash, err := typedExtension(consistentHashMatcherName, &consistenthashingv3.ConsistentHashing{Threshold: threshold, Modulo: total})
		if err != nil {
			return nil, err
		}
		to, err := udpRouteTo(backends[i])
		if err != nil {
			return nil, err
		}
		list.Matchers = append(list.Matchers, &matcherv3.Matcher_MatcherList_FieldMatcher{
			Predicate: &matcherv3.Matcher_MatcherList_Predicate{MatchType: &matcherv3.Matcher_MatcherList_Predicate_SinglePredicate_{
				SinglePredicate: &matcherv3.Matcher_MatcherList_Predicate_SinglePredicate{
					Input:   input,
					Matcher: &matcherv3.Matcher_MatcherList_Predicate_SinglePredicate_CustomMatch{CustomMatch: hash},
				},
			}},
			OnMatch: to,
		})
	}
	if len(list.Matchers) > 0 {
		m.MatcherType = &matcherv3.Matcher_MatcherList_{MatcherList: list}
	}
	return m, nil
}

// udpRouteTo is the action sending a session to b's cluster; an invalid
// backend names no cluster, and its sessions' datagrams are dropped.
func udpRouteTo(b plan.WeightedBackend) (*matcherv3.Matcher_OnMatch, error) {
	cluster := b.Cluster
	if cluster == "" {
		cluster = invalidBackendCluster
	}
	action, err := typedExtension(udpRouteActionName, &udpproxyv3.Route{Cluster: cluster})
	if err != nil {
		return nil, err
	}
	return &matcherv3.Matcher_OnMatch{OnMatch: &matcherv3.Matcher_OnMatch_Action{Action: action}}, nil
}

func typedExtension(name string, m proto.Message) (*xdscorev3.TypedExtensionConfig, error) {
	packed, err := anypb.New(m)
	if err != nil {
		return nil, err
	}
	return &xdscorev3.TypedExtensionConfig{Name: name, TypedConfig: packed}, nil
}
