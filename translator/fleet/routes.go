package fleet

import (
	"slices"
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlsplane/tlsplane/translator/envoy"
	"github.com/tlsplane/tlsplane/translator/gateway"
)

// Table is one served route configuration: RC, and the table it was
// first emitted from (its name, port and listeners; the virtual hosts
// served are RC's).
type Table struct {
	Table *gateway.Table
	RC    *routev3.RouteConfiguration
}

// Patch is fleet with the route configurations of tables rebuilt for
// the hostnames rebuild names, and the clusters reached changed as reached
// says (gateway.PatchReached); fleet itself when none changed.
func Patch(fleet *Resources, tables []*Table, rebuild gateway.Rebuild, reached map[string]bool) (*Resources, bool) {
	if fleet == nil {
		return nil, false
	}
	newReached := gateway.PatchReached(fleet.Reached, reached)
	routes, copied := fleet.Routes, false
	for _, ts := range tables {
		hosts := ts.Table.HostsToRebuild(rebuild)
		if len(hosts) == 0 {
			continue
		}
		rc, ok := ts.patch(hosts)
		if !ok {
			return nil, false
		}
		if rc == ts.RC {
			continue
		}
		i, found := slices.BinarySearchFunc(routes, ts.RC.Name, func(r *routev3.RouteConfiguration, name string) int {
			return strings.Compare(r.Name, name)
		})
		if !found || routes[i] != ts.RC {
			return nil, false
		}
		if !copied {
			routes, copied = slices.Clone(routes), true // the last Output's stays as it is
		}
		routes[i], ts.RC = rc, rc
	}
	if !copied && slices.Equal(newReached, fleet.Reached) {
		return fleet, true
	}
	return &Resources{Listeners: fleet.Listeners, Routes: routes, Secrets: fleet.Secrets, Clusters: fleet.Clusters, Reached: newReached}, true
}

// patch re-emits the virtual hosts of hosts (sorted) in the table, keeping
// every other one, and each rebuilt one that came out equal, as it was.
// The table's route configuration is returned unchanged when nothing is
// new; ok is false when Envoy would reject a rebuilt virtual host.
func (ts *Table) patch(hosts []string) (*routev3.RouteConfiguration, bool) {
	vhosts := ts.RC.VirtualHosts // one per hostname, sorted by it (as planned)
	copied := false
	for _, h := range hosts {
		i, found := slices.BinarySearchFunc(vhosts, h, func(v *routev3.VirtualHost, h string) int { return strings.Compare(v.GetName(), h) })
		vh, ok := ts.Table.VirtualHost(h)
		var v *routev3.VirtualHost
		if ok {
			if v = envoy.VirtualHost(ts.Table.Plan, &vh); v.ValidateAll() != nil {
				return nil, false
			}
			if found && proto.Equal(v, vhosts[i]) {
				continue
			}
		} else if !found {
			continue
		}
		if !copied {
			vhosts, copied = slices.Clone(vhosts), true // the last Output's stays as it is
		}
		switch {
		case !ok:
			vhosts = slices.Delete(vhosts, i, i+1)
		case found:
			vhosts[i] = v
		default:
			vhosts = slices.Insert(vhosts, i, v)
		}
	}
	if !copied {
		return ts.RC, true
	}
	if len(vhosts) == 0 {
		vhosts = nil // as envoy.RouteConfig emits an empty table
	}
	return envoy.RouteConfigOf(ts.Table.Plan, vhosts), true
}
