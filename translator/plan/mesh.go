package plan

import "strings"

// Mesh names: a mesh fleet and its listeners start with `Mesh/`, upper
// case, which no namespace is (segment escapes it), so none equals a
// Gateway fleet's `<namespace>/<gateway>` or a Gateway listener's
// `<namespace>/<gateway>/<port>`.

// MeshFleet is the fleet (the Envoy node's cluster) of the sidecars of
// one namespace in the mesh: `Mesh/<namespace>`.
func MeshFleet(namespace string) string { return "Mesh/" + segment(namespace) }

// MeshListenerName is a mesh fleet's outbound listener for one Service
// port, `Mesh/<namespace>/<service>/<port>`; its route configuration,
// when routes apply to the port, has the same name.
func MeshListenerName(namespace, service string, port int32) string {
	return "Mesh/" + ClusterName(namespace, service, port)
}

// MeshStreamChainName is the filter chain of a mesh listener for a
// Service port no route applies to: its connections go to the port's
// cluster unchanged.
const MeshStreamChainName = "service"

// MeshFleetNamespace is the namespace of a mesh fleet, as MeshFleet
// wrote it (escaped: a legal namespace is its own name); ok is false for
// every other fleet.
func MeshFleetNamespace(fleet string) (namespace string, ok bool) {
	ns, ok := strings.CutPrefix(fleet, "Mesh/")
	if !ok || ns == "" || strings.Contains(ns, "/") {
		return "", false
	}
	return ns, true
}
