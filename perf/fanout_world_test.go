package perf

import (
	"fmt"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// fanoutWorld is what BenchmarkFanout's server serves and how its
// simulated Envoys read it: a world of policy-targeted Services whose
// edit is a CA rotation, read by Gateway-like Envoys of one fleet
// (gatewayWorld), or a mesh whose edit is a producer route's path, read
// by sidecars of each mesh fleet (meshWorld, issue 39's costs).
type fanoutWorld struct {
	name string // what the client process is told (envWorld)
	// inputs are the world of n Services.
	inputs func(n int) translator.Inputs
	// edit is the next edit of in, numbered rv, as an informer would
	// hand it over: the new inputs and the change.
	edit func(in translator.Inputs, n, edits, rv int) (translator.Inputs, translator.Change)
	// fleet is the node cluster of the i-th stream.
	fleet func(i int) string
	// types are what each stream subscribes to (wildcard); marker is
	// the type whose update tells that an edit arrived.
	types  []string
	marker string
}

var gatewayWorld = fanoutWorld{
	name:   "gateway",
	inputs: Inputs,
	edit: func(in translator.Inputs, n, edits, rv int) (translator.Inputs, translator.Change) {
		i := (edits * 7919) % n
		in = RotateCA(in, i, rv)
		return in, changeOf(translator.KindConfigMap, in.ConfigMaps[i])
	},
	fleet:  func(int) string { return "edge" },
	types:  servedTypes,
	marker: resource.SecretType,
}

// meshWorld: sidecars subscribe as a sidecar Envoy does (clusters, their
// endpoints and secrets, listeners and route configurations), spread
// over the mesh's fleets; an edit changes a producer route, so one route
// configuration of every fleet.
var meshWorld = fanoutWorld{
	name:   "mesh",
	inputs: MeshInputs,
	edit: func(in translator.Inputs, n, edits, rv int) (translator.Inputs, translator.Change) {
		i := (edits * 7919) % n
		in.HTTPRoutes = append([]*gwv1.HTTPRoute(nil), in.HTTPRoutes...)
		old := in.HTTPRoutes[i]
		in.HTTPRoutes[i] = MeshRoute(old.Namespace, old.Name, fmt.Sprintf("/v%d", rv))
		return in, changeOf(translator.KindHTTPRoute, in.HTTPRoutes[i])
	},
	fleet:  MeshFleetOf,
	types:  []string{resource.ClusterType, resource.EndpointType, resource.SecretType, resource.ListenerType, resource.RouteType},
	marker: resource.RouteType,
}

// worldNamed is the world the client process was told of.
func worldNamed(name string) (fanoutWorld, error) {
	for _, w := range []fanoutWorld{gatewayWorld, meshWorld} {
		if w.name == name {
			return w, nil
		}
	}
	return fanoutWorld{}, fmt.Errorf("no fan-out world %q", name)
}
