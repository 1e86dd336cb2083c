package snapshots

import (
	"slices"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/tlsplane/tlsplane/translator"
)

// Fleet is the snapshot key of an Envoy node: its cluster (Envoy's
// --service-cluster). An empty cluster is the fleet "".
func Fleet(node *corev3.Node) string { return node.GetCluster() }

// fleetResources is what one fleet is served, each slice sorted by name.
type fleetResources struct {
	clusters  []*clusterv3.Cluster
	endpoints []*endpointv3.ClusterLoadAssignment
	secrets   []*tlsv3.Secret
}

// resourcesFor returns the part of out a fleet may see. A fleet absent from
// fleetNamespaces sees everything; a listed one sees clusters of its
// namespaces (of those, when only is not nil, the ones named in it: a
// Gateway fleet's reach) and exactly the endpoints and secrets those
// clusters reference, so filtering keeps the snapshot consistent.
func resourcesFor(d *digests, out translator.Output, fleet string, fleetNamespaces map[string][]string, only []string) (fleetResources, error) {
	allowed, restricted := fleetNamespaces[fleet]
	if !restricted {
		return fleetResources{clusters: out.Clusters, endpoints: out.Endpoints, secrets: out.Secrets}, nil
	}
	namespaces := make(map[string]bool, len(allowed))
	for _, ns := range allowed {
		namespaces[ns] = true
	}
	clusters := out.Clusters
	if only != nil {
		clusters = reachedClusters(out.Clusters, only)
	}
	var kept []*clusterv3.Cluster
	for _, c := range clusters {
		// The translator says whose cluster it is: a name is not parsed
		// for it, so no name can pass for another namespace's.
		if ns, known := out.ClusterNamespaces[c.GetName()]; known && namespaces[ns] {
			kept = append(kept, c)
		}
	}
	return withWhatTheyRead(d, out, kept)
}

// withWhatTheyRead is clusters (in out's order) with the load assignments
// and secrets of out they read, in out's order: a consistent part of out.
func withWhatTheyRead(d *digests, out translator.Output, clusters []*clusterv3.Cluster) (fleetResources, error) {
	res := fleetResources{clusters: clusters}
	endpoints, secrets := map[string]bool{}, map[string]bool{}
	for _, c := range clusters {
		if isEDS(c) {
			endpoints[edsName(c)] = true
		}
		dg, err := d.of(c)
		if err != nil {
			return fleetResources{}, err
		}
		for _, name := range dg.secrets {
			secrets[name] = true
		}
	}
	for _, e := range out.Endpoints {
		if endpoints[e.GetClusterName()] {
			res.endpoints = append(res.endpoints, e)
		}
	}
	for _, s := range out.Secrets {
		if secrets[s.GetName()] {
			res.secrets = append(res.secrets, s)
		}
	}
	return res, nil
}

// edsName is the ClusterLoadAssignment name an EDS cluster asks for.
func edsName(c *clusterv3.Cluster) string {
	if n := c.GetEdsClusterConfig().GetServiceName(); n != "" {
		return n
	}
	return c.GetName()
}

// reachedClusters are the clusters named in reached (sorted), found by
// binary search: a Gateway fleet costs what its routes reach.
func reachedClusters(clusters []*clusterv3.Cluster, reached []string) []*clusterv3.Cluster {
	out := make([]*clusterv3.Cluster, 0, len(reached))
	for _, name := range reached {
		if i, ok := slices.BinarySearchFunc(clusters, name, func(c *clusterv3.Cluster, n string) int { return strings.Compare(c.GetName(), n) }); ok {
			out = append(out, clusters[i])
		}
	}
	return out
}
