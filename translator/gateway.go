package translator

import (
	"fmt"
	"slices"
	"strings"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// gatewayResult is what the Gateway API rules produce.
type gatewayResult struct {
	fleets   map[string]*FleetResources
	statuses GatewayAPIStatuses
	// reach lists, per Service port, the Gateways whose accepted routes
	// send traffic to it (sorted): the ancestors of its policies.
	reach    map[serviceBackend][]types.NamespacedName
	warnings []string
	// memo is what the rules judged, kept so that a route change can be
	// applied to it (patchRoutes); nil when there is nothing to patch.
	memo *gatewayMemo
}

// translateGateways applies the GatewayClass, Gateway, HTTPRoute and
// ReferenceGrant rules to the classes whose controllerName is ours.
func translateGateways(in Inputs, ix *objectIndex, opts Options, now metav1.Time) gatewayResult {
	res := gatewayResult{
		fleets: map[string]*FleetResources{},
		statuses: GatewayAPIStatuses{
			GatewayClasses: map[string]gwv1.GatewayClassStatus{},
			Gateways:       map[types.NamespacedName]gwv1.GatewayStatus{},
			HTTPRoutes:     map[types.NamespacedName]gwv1.HTTPRouteStatus{},
		},
		reach: map[serviceBackend][]types.NamespacedName{},
	}
	if len(in.GatewayClasses) == 0 {
		return res
	}
	g := newGatewayIndex(in, ix)
	accepted := map[string]bool{}
	for _, name := range sortedNames(g.classes) {
		c := g.classes[name]
		if c.Spec.ControllerName != opts.ControllerName {
			continue
		}
		st, ok := gatewayClassStatus(c, now)
		res.statuses.GatewayClasses[name] = st
		accepted[name] = ok
	}
	gateways := map[types.NamespacedName]*gatewayState{}
	var order []*gatewayState
	certs := map[string]*certificate{}
	for _, gw := range g.gateways {
		if !accepted[string(gw.Spec.GatewayClassName)] {
			continue
		}
		gs := &gatewayState{gw: gw, nn: nameOf(gw.Namespace, gw.Name), listeners: judgeListeners(gw, ix, g, certs)}
		gateways[gs.nn] = gs
		order = append(order, gs)
	}
	if len(order) == 0 {
		return res
	}
	memo := &gatewayMemo{g: g, gateways: gateways, routes: map[types.NamespacedName]routeEntry{},
		reach: map[serviceBackend]map[types.NamespacedName]int{}}
	for _, r := range g.routes {
		rs := judgeRoute(r, ix, g)
		parents := attachRoute(rs, gateways, g)
		if len(parents) == 0 {
			continue
		}
		res.statuses.HTTPRoutes[rs.nn] = routeStatus(rs, parents, opts.ControllerName, now)
		e := routeEntry{rs: rs, parents: parents}
		memo.routes[rs.nn] = e
		memo.countReach(e, 1, nil)
	}
	for b := range memo.reach {
		res.reach[b] = memo.reachOf(b)
	}
	address := opts.ListenerAddress
	if address == "" {
		address = DefaultListenerAddress
	}
	for _, gs := range order {
		res.statuses.Gateways[gs.nn] = gatewayStatus(gs, g, now)
		fleet, warnings := gatewayFleet(gs, address, certs)
		res.fleets[GatewayFleet(gs.nn)] = fleet
		res.warnings = append(res.warnings, warnings...)
	}
	res.memo = memo
	return res
}

// gatewayFleet builds a Gateway's listeners, route configurations and
// certificates. A listener Envoy would reject is left out with a warning,
// with its routes, so the rest is still served.
func gatewayFleet(gs *gatewayState, address string, certs map[string]*certificate) (*FleetResources, []string) {
	fleet := &FleetResources{}
	var warnings []string
	secrets := map[string]bool{}
	for _, p := range listenerPlans(gs, address) {
		l, err := envoyListener(p)
		if err == nil {
			err = l.ValidateAll()
		}
		tables := p.tables()
		routes := make([]*routev3.RouteConfiguration, 0, len(tables))
		for _, t := range tables {
			rc := envoyRouteConfig(t)
			if err == nil {
				err = rc.ValidateAll()
			}
			routes = append(routes, rc)
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("Gateway %s port %d: not served: %v", gatewayKey(gs.nn), p.port, err))
			continue
		}
		for i, t := range tables {
			gs.tables = append(gs.tables, &tableState{plan: t, rc: routes[i]})
		}
		fleet.Listeners = append(fleet.Listeners, l)
		fleet.Routes = append(fleet.Routes, routes...)
		for _, c := range p.chains {
			for _, name := range c.certSecrets {
				secrets[name] = true
			}
		}
	}
	for _, name := range sortedNames(secrets) {
		c := certs[name]
		fleet.Secrets = append(fleet.Secrets, certificateSecret(name, c.chain, c.key))
	}
	slices.SortFunc(fleet.Listeners, func(a, b *listenerv3.Listener) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(fleet.Routes, func(a, b *routev3.RouteConfiguration) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(fleet.Secrets, func(a, b *tlsv3.Secret) int { return strings.Compare(a.Name, b.Name) })
	return fleet, warnings
}

// tables are a listener's route configurations.
func (p listenerPlan) tables() []*routeTablePlan {
	if p.http != nil {
		return []*routeTablePlan{p.http}
	}
	out := make([]*routeTablePlan, 0, len(p.chains))
	for _, c := range p.chains {
		out = append(out, c.routes)
	}
	return out
}

// listenerPlans groups a Gateway's served listeners by port: every HTTP
// listener of a port shares one route table (virtual hosts tell their
// hostnames apart); each HTTPS listener is a filter chain of its own.
func listenerPlans(gs *gatewayState, address string) []listenerPlan {
	byPort := map[gwv1.PortNumber][]*listenerState{}
	for _, l := range gs.listeners {
		if l.served() {
			byPort[l.spec.Port] = append(byPort[l.spec.Port], l)
		}
	}
	ports := make([]gwv1.PortNumber, 0, len(byPort))
	for port := range byPort {
		ports = append(ports, port)
	}
	slices.Sort(ports)
	prefix := gatewayKey(gs.nn)
	var out []listenerPlan
	for _, port := range ports {
		ls := byPort[port]
		p := listenerPlan{name: fmt.Sprintf("%s/%d", prefix, port), address: address, port: uint32(port)}
		if !ls[0].https {
			p.http = routeTable(p.name, p.port, ls)
		} else {
			for _, l := range ls {
				c := tlsChainPlan{listener: string(l.spec.Name), certSecrets: l.certSecrets,
					routes: routeTable(fmt.Sprintf("%s/%s", p.name, l.spec.Name), p.port, []*listenerState{l})}
				if l.hostname != "" {
					c.serverNames = []string{l.hostname}
				}
				p.chains = append(p.chains, c)
			}
		}
		out = append(out, p)
	}
	return out
}

// routeTable gathers the routes attached to listeners into one virtual
// host per hostname, each in precedence order.
func routeTable(name string, port uint32, ls []*listenerState) *routeTablePlan {
	hosts := map[string]bool{}
	for _, l := range ls {
		for h := range l.byHost {
			hosts[h] = true
		}
		if len(ls) > 1 && l.hostname != "" {
			hosts[l.hostname] = true
		}
	}
	t := &routeTablePlan{name: name, port: port, listeners: ls}
	for _, h := range sortedNames(hosts) {
		if vh, ok := vhostOf(ls, h); ok {
			t.vhosts = append(t.vhosts, vh)
		}
	}
	return t
}

// vhostOf is the virtual host of hostname h in the route table of
// listeners ls: the routes attached for h to the listeners that own it,
// in precedence order. ok is false when the table has none for h.
func vhostOf(ls []*listenerState, h string) (vhostPlan, bool) {
	// With other listeners on the port, a listener's own hostname 404s
	// here rather than fall to a wider listener's routes.
	exists := false
	var rrs []rankedRoute
	seen := map[string]bool{}
	for _, l := range ls {
		if len(ls) > 1 && l.hostname != "" && l.hostname == h {
			exists = true
		}
		if len(l.byHost[h]) == 0 || !owns(ls, l, h) {
			continue
		}
		for _, rs := range l.byHost[h] {
			for _, rr := range rs.plans {
				if !seen[rr.plan.name] {
					seen[rr.plan.name] = true
					rrs = append(rrs, rr)
				}
			}
		}
	}
	if !exists && len(rrs) == 0 {
		return vhostPlan{}, false
	}
	slices.SortFunc(rrs, func(a, b rankedRoute) int { return compareRanks(a.rank, b.rank) })
	vh := vhostPlan{hostname: h, routes: make([]routePlan, 0, len(rrs))}
	for _, rr := range rrs {
		vh.routes = append(vh.routes, rr.plan)
	}
	return vh, true
}

// owns: only the most specific listener covering h serves routes there,
// so a route attached to *.example.com never answers for a name that a
// listener abc.example.com of the same port takes.
func owns(ls []*listenerState, l *listenerState, h string) bool {
	for _, other := range ls {
		if listenerCovers(other.hostname, h) && hostnameSpecificity(other.hostname) > hostnameSpecificity(l.hostname) {
			return false
		}
	}
	return true
}
