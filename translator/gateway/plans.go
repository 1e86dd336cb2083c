package gateway

import (
	"slices"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/route"
)

// Port is one Envoy listener of a Gateway (one port) as planned, with the
// route tables it serves.
type Port struct {
	Plan *plan.Listener
	// Tables are Plan.Tables(), each with what it was planned from, so a
	// route change can rebuild its virtual hosts.
	Tables []*Table
}

// Socket is what the port's Envoy listener binds.
func (p Port) Socket() Socket {
	return Socket{Port: gwv1.PortNumber(p.Plan.Port), UDP: p.Plan.UDP != nil}
}

// Table is one route configuration's plan and the Gateway listeners whose
// routes it holds.
type Table struct {
	Plan      *plan.RouteTable
	listeners []*listenerState
	// peers are the port's other HTTPS listeners, for an HTTPS listener's
	// table: requests their hostnames take are misdirected here.
	peers []*listenerState
}

// Ports plans a Gateway's served listeners, grouped by port: every HTTP
// listener of a port shares one route table (virtual hosts tell their
// hostnames apart); each HTTPS listener is a filter chain of its own. UDP
// listeners come last, an Envoy listener of their own per port.
func (gs *Gateway) Ports(address string) []Port {
	byPort := map[gwv1.PortNumber][]*listenerState{}
	for _, l := range gs.allListeners() {
		if l.served() && !l.datagram {
			byPort[l.spec.Port] = append(byPort[l.spec.Port], l)
		}
	}
	ports := make([]gwv1.PortNumber, 0, len(byPort))
	for port := range byPort {
		ports = append(ports, port)
	}
	slices.Sort(ports)
	var out []Port
	for _, port := range ports {
		ls := byPort[port]
		p := &plan.Listener{Name: plan.ListenerName(gs.nn.Namespace, gs.nn.Name, int32(port)), Address: address, Port: uint32(port)}
		var tables []*Table
		defaulted := false  // some chain takes connections whatever their SNI
		hasStreams := false // a TLS or TCP listener is on the port
		if !ls[0].https && !ls[0].stream {
			t := routeTable(p.Name, p.Port, ls, nil)
			p.HTTP, tables = t.Plan, []*Table{t}
		} else {
			for _, l := range ls {
				if l.stream {
					p.Streams, hasStreams = append(p.Streams, streamChains(l)...), true
					continue
				}
				defaulted = defaulted || l.hostname == ""
				t := routeTable(plan.ChainRouteTableName(p.Name, l.chainName()), p.Port, []*listenerState{l}, httpsPeers(ls, l))
				c := plan.TLSChain{Listener: l.chainName(), CertSecrets: l.certSecrets, Routes: t.Plan,
					ClientValidation: l.clientValidation()}
				if l.hostname != "" {
					c.ServerNames = []string{l.hostname}
				}
				p.Chains = append(p.Chains, c)
				tables = append(tables, t)
			}
		}
		if hasStreams && !defaulted && !slices.ContainsFunc(p.Streams, func(c plan.StreamChain) bool { return len(c.ServerNames) == 0 }) {
			// Connections no chain takes (another SNI, or a listener with
			// no route yet) are refused, by a chain of their own.
			p.Streams = append(p.Streams, plan.StreamChain{Name: plan.UnmatchedChainName})
		}
		out = append(out, Port{Plan: p, Tables: tables})
	}
	return append(out, gs.udpPorts(address)...)
}

// Certificate is a listener certificate's content, by the SDS name a
// chain's CertSecrets give.
func (gs *Gateway) Certificate(secret string) (chain, key []byte) {
	c := gs.certs[secret]
	return c.Chain, c.Key
}

// routeTable gathers the routes attached to listeners into one virtual
// host per hostname, each in precedence order.
func routeTable(name string, port uint32, ls, peers []*listenerState) *Table {
	t := &Table{Plan: &plan.RouteTable{Name: name, Port: port, Misdirected: misdirectedHosts(peers)}, listeners: ls, peers: peers}
	hosts := map[string]bool{}
	for _, l := range ls {
		for h := range l.byHost {
			hosts[h] = true
		}
		if t.shared() && l.hostname != "" {
			hosts[l.hostname] = true
		}
	}
	for _, h := range input.SortedNames(hosts) {
		if vh, ok := t.VirtualHost(h); ok {
			t.Plan.VirtualHosts = append(t.Plan.VirtualHosts, vh)
		}
	}
	return t
}

// shared: other listeners take requests on the table's port, so a
// listener's own hostname 404s here rather than fall to theirs.
func (t *Table) shared() bool { return len(t.listeners) > 1 || len(t.peers) > 0 }

// VirtualHost is the virtual host of hostname h in the table: the routes
// attached for h to the listeners that own it, in precedence order, as
// they are judged now. ok is false when the table has none for h.
func (t *Table) VirtualHost(h string) (plan.VirtualHost, bool) {
	// With other listeners on the port, a listener's own hostname 404s
	// here rather than fall to a wider listener's routes (or 421).
	exists := false
	var rrs []route.Ranked
	seen := map[string]bool{}
	for _, l := range t.listeners {
		if t.shared() && l.hostname != "" && l.hostname == h {
			exists = true
		}
		if len(l.byHost[h]) == 0 || !owns(t.listeners, l, h) || !owns(t.peers, l, h) {
			continue
		}
		for _, rs := range l.byHost[h] {
			for _, rr := range rs.Plans {
				if !seen[rr.Plan.Name] {
					seen[rr.Plan.Name] = true
					rrs = append(rrs, rr)
				}
			}
		}
	}
	if !exists && len(rrs) == 0 {
		return plan.VirtualHost{}, false
	}
	slices.SortFunc(rrs, func(a, b route.Ranked) int { return route.CompareRanks(a.Rank, b.Rank) })
	vh := plan.VirtualHost{Hostname: h, Routes: make([]plan.Route, 0, len(rrs))}
	for _, rr := range rrs {
		vh.Routes = append(vh.Routes, rr.Plan)
	}
	return vh, true
}

// HostsToRebuild are the hostnames of this table that a route patch
// touched, sorted; none when it touched none.
func (t *Table) HostsToRebuild(r Rebuild) []string {
	hosts := map[string]bool{}
	for _, l := range t.listeners {
		for h := range r[l] {
			hosts[h] = true
		}
	}
	if len(hosts) == 0 {
		return nil
	}
	return input.SortedNames(hosts)
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

// httpsPeers are the HTTPS listeners of ls but l.
func httpsPeers(ls []*listenerState, l *listenerState) []*listenerState {
	var out []*listenerState
	for _, p := range ls {
		if p != l && p.https {
			out = append(out, p)
		}
	}
	return out
}

// misdirectedHosts are the virtual host domains of peers' hostnames, sorted.
func misdirectedHosts(peers []*listenerState) []string {
	if len(peers) == 0 {
		return nil
	}
	hosts := make(map[string]bool, len(peers))
	for _, p := range peers {
		h := p.hostname
		if h == "" {
			h = "*"
		}
		hosts[h] = true
	}
	return input.SortedNames(hosts)
}
