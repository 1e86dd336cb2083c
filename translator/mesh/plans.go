package mesh

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/route"
)

// Fleet is one mesh fleet's plans: the sidecars of one namespace.
type Fleet struct {
	Name      string // plan.MeshFleet(Namespace)
	Namespace string
	// Listeners are the outbound listeners, one per TCP port of each
	// Service in the mesh with a cluster IP, sorted by name.
	Listeners []*plan.Listener
	// Reached are the clusters the listeners send traffic to, sorted.
	Reached []string
}

// destination is one Service port sidecars capture: the listener every
// mesh fleet gets for it, bar its routes.
type destination struct {
	port    input.ServicePort
	address string
	cluster string
}

// Fleets plans a fleet per namespace in the mesh. Every fleet is given
// the same destinations (each TCP port of each capturable Service of the
// mesh); what differs is the routes: a namespace's consumer routes for a
// port, else the producer routes, else none and the connection goes to
// the port's cluster unchanged. warnings name Service ports left out
// because an older Service holds their address and port.
//
// A listener without consumer routes is the same in every fleet, so it
// is planned once and shared (the same pointer in each fleet that has
// it): the emitter emits it once, and a fleet costs what differs in it.
// Plans are never changed once made.
func Fleets(res *Result, ix *input.Index) (fleets []*Fleet, warnings []string) {
	if len(res.Members) == 0 {
		return nil, nil
	}
	dests, warnings := destinations(res.Members, ix)
	shared := make([]*plan.Listener, len(dests))
	var sharedReached []string // the clusters of a fleet with no consumer route
	for _, ns := range slices.Sorted(maps.Keys(res.Members)) {
		f := &Fleet{Name: plan.MeshFleet(ns), Namespace: ns, Listeners: make([]*plan.Listener, 0, len(dests))}
		consumers := res.Consumers[ns]
		for i, d := range dests {
			if routes := consumers[d.port]; len(routes) > 0 {
				f.Listeners = append(f.Listeners, listenerOf(d, routes))
				continue
			}
			if shared[i] == nil {
				shared[i] = listenerOf(d, res.Producers[d.port])
			}
			f.Listeners = append(f.Listeners, shared[i])
		}
		if len(consumers) == 0 && sharedReached != nil {
			f.Reached = sharedReached
		} else {
			f.Reached = reachedBy(f.Listeners)
			if len(consumers) == 0 {
				sharedReached = f.Reached
			}
		}
		fleets = append(fleets, f)
	}
	return fleets, warnings
}

// reachedBy are the clusters listeners send traffic to, sorted.
func reachedBy(listeners []*plan.Listener) []string {
	reached := map[string]bool{}
	for _, l := range listeners {
		addReached(reached, l)
	}
	return input.SortedNames(reached)
}

// destinations are the capturable Service ports of the mesh, sorted by
// listener name. Two Services cannot share a cluster IP in a cluster, but
// manifests can: the older Service (then the one first by name) keeps
// the address and port.
func destinations(members Members, ix *input.Index) ([]destination, []string) {
	var services []*corev1.Service
	for nn, svc := range ix.Services {
		if members[nn.Namespace] && notCapturable(svc) == "" && net.ParseIP(svc.Spec.ClusterIP) != nil {
			services = append(services, svc)
		}
	}
	sort.Slice(services, func(i, j int) bool { return olderService(services[i], services[j]) })
	var (
		out      []destination
		warnings []string
	)
	taken := map[string]types.NamespacedName{}
	for _, svc := range services {
		nn := input.NameOf(svc.Namespace, svc.Name)
		seen := map[int32]bool{}
		for _, sp := range svc.Spec.Ports {
			if input.ProtocolOrTCP(sp.Protocol) != corev1.ProtocolTCP || seen[sp.Port] {
				continue
			}
			seen[sp.Port] = true
			socket := net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(sp.Port)))
			if holder, ok := taken[socket]; ok {
				warnings = append(warnings, fmt.Sprintf("Service %s port %d: not captured by the mesh: Service %s has the same cluster IP and port (%s)", nn, sp.Port, holder, socket))
				continue
			}
			taken[socket] = nn
			out = append(out, destination{port: input.ServicePort{Service: nn, Port: sp.Port}, address: svc.Spec.ClusterIP,
				cluster: plan.ClusterName(nn.Namespace, nn.Name, sp.Port)})
		}
	}
	slices.SortFunc(out, func(a, b destination) int {
		return strings.Compare(plan.MeshListenerName(a.port.Service.Namespace, a.port.Service.Name, a.port.Port),
			plan.MeshListenerName(b.port.Service.Namespace, b.port.Service.Name, b.port.Port))
	})
	return out, warnings
}

// listenerOf is the outbound listener of d: HTTP through routes when
// some apply, else a TCP proxy to the port's cluster.
func listenerOf(d destination, routes []*route.Route) *plan.Listener {
	name := plan.MeshListenerName(d.port.Service.Namespace, d.port.Service.Name, d.port.Port)
	l := &plan.Listener{Name: name, Address: d.address, Port: uint32(d.port.Port), Captured: true}
	if len(routes) == 0 {
		l.Streams = []plan.StreamChain{{Name: plan.MeshStreamChainName, Backends: []plan.WeightedBackend{{Cluster: d.cluster, Weight: 1}}}}
		return l
	}
	var ranked []route.Ranked
	seen := map[string]bool{}
	for _, rs := range routes {
		for _, rr := range rs.Plans {
			if !seen[rr.Plan.Name] {
				seen[rr.Plan.Name] = true
				ranked = append(ranked, rr)
			}
		}
	}
	slices.SortFunc(ranked, func(a, b route.Ranked) int { return route.CompareRanks(a.Rank, b.Rank) })
	// Hostnames mean nothing to a mesh route (GEP-1294): the listener is
	// the Service port, whatever Host the caller wrote.
	vh := plan.VirtualHost{Hostname: "*", Routes: make([]plan.Route, 0, len(ranked))}
	for _, rr := range ranked {
		vh.Routes = append(vh.Routes, rr.Plan)
	}
	l.HTTP = &plan.RouteTable{Name: name, Port: uint32(d.port.Port), VirtualHosts: []plan.VirtualHost{vh}}
	return l
}

// addReached adds the clusters l sends traffic to, mirrors included.
func addReached(reached map[string]bool, l *plan.Listener) {
	for _, c := range l.Streams {
		for _, b := range c.Backends {
			reached[b.Cluster] = true
		}
	}
	if l.HTTP == nil {
		return
	}
	for _, vh := range l.HTTP.VirtualHosts {
		for _, r := range vh.Routes {
			for _, b := range r.Backends {
				if b.Cluster != plan.InvalidBackendClusterName {
					reached[b.Cluster] = true
				}
			}
			for _, m := range r.Mirrors {
				reached[m.Cluster] = true
			}
		}
	}
}

// olderService orders Services by age, then namespace and name.
func olderService(a, b *corev1.Service) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}
