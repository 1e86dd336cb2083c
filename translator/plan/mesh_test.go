package plan

import "testing"

// TestMeshFleetNamespace: a mesh fleet gives its namespace back; no
// Gateway fleet, listener or malformed name is taken for one.
func TestMeshFleetNamespace(t *testing.T) {
	for _, tc := range []struct {
		fleet, ns string
		ok        bool
	}{
		{MeshFleet("shop"), "shop", true},
		{MeshFleet("a.b-c"), "a.b-c", true},
		{GatewayFleet("shop", "edge"), "", false},
		{GatewayFleet("mesh", "shop"), "", false},
		{MeshListenerName("shop", "echo", 80), "", false},
		{"Mesh/", "", false},
		{"Mesh", "", false},
		{"", "", false},
	} {
		ns, ok := MeshFleetNamespace(tc.fleet)
		if ns != tc.ns || ok != tc.ok {
			t.Errorf("MeshFleetNamespace(%q) = %q, %v; want %q, %v", tc.fleet, ns, ok, tc.ns, tc.ok)
		}
	}
}
