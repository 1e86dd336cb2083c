package xds

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

func mustParseFleetIdentity(t *testing.T, template string) *FleetIdentity {
	t.Helper()
	f, err := ParseFleetIdentity(template)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMutualTLSMeshFleetsByServiceAccount: over a real mutual TLS server,
// a workload certificate naming a ServiceAccount of namespace shop reads
// fleet Mesh/shop, and nothing else: not another namespace's mesh fleet,
// not a Gateway fleet; Gateway fleets keep their template; without the
// mesh rule, a mesh fleet is a fleet like any other.
func TestMutualTLSMeshFleetsByServiceAccount(t *testing.T) {
	mesh, err := ParseMeshIdentity(DefaultMeshIdentity)
	if err != nil {
		t.Fatal(err)
	}
	withMesh := startSecureWith(t, DefaultFleetIdentity, snapshots.Options{},
		Options{Security: Security{Fleet: mustParseFleetIdentity(t, DefaultFleetIdentity).WithMesh(mesh)}})
	withMesh.publish(t, st.Output(payments), true)
	without := startSecure(t, DefaultFleetIdentity)
	without.publish(t, st.Output(payments), true)

	cases := []struct {
		name   string
		server *secureServer
		uri    string
		fleet  string
		code   codes.Code // OK: served
	}{
		{"a ServiceAccount of shop reads Mesh/shop", withMesh, "spiffe://cluster.local/ns/shop/sa/echo", "Mesh/shop", codes.OK},
		{"another ServiceAccount of shop too", withMesh, "spiffe://cluster.local/ns/shop/sa/default", "Mesh/shop", codes.OK},
		{"not another namespace's mesh fleet", withMesh, "spiffe://cluster.local/ns/shop/sa/echo", "Mesh/caller", codes.PermissionDenied},
		{"not a Gateway fleet", withMesh, "spiffe://cluster.local/ns/shop/sa/echo", "shop/edge", codes.PermissionDenied},
		{"not a fleet named like its identity", withMesh, "spiffe://cluster.local/ns/shop/sa/echo", "ns/shop/sa/echo", codes.PermissionDenied},
		{"a namespace that only starts like shop", withMesh, "spiffe://cluster.local/ns/shop-x/sa/echo", "Mesh/shop", codes.PermissionDenied},
		{"a ServiceAccount holding a '/'", withMesh, "spiffe://cluster.local/ns/shop/sa/echo/x", "Mesh/shop", codes.PermissionDenied},
		{"no ServiceAccount", withMesh, "spiffe://cluster.local/ns/shop/sa/", "Mesh/shop", codes.PermissionDenied},
		{"the fleet template's identity no longer reads a mesh fleet", withMesh, "spiffe://cluster.local/fleet/Mesh/shop", "Mesh/shop", codes.PermissionDenied},
		{"Gateway fleets keep their template", withMesh, "spiffe://cluster.local/fleet/edge", "edge", codes.OK},
		{"without the mesh rule: no ServiceAccount identity", without, "spiffe://cluster.local/ns/shop/sa/echo", "Mesh/shop", codes.PermissionDenied},
		{"without the mesh rule: the fleet template", without, "spiffe://cluster.local/fleet/Mesh/shop", "Mesh/shop", codes.OK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cert, key := tc.server.ca.issue(t, leafSpec{uri: tc.uri})
			got, err := sotwOutcome(t, tc.server.dial(t, cert, key, nil), tc.fleet)
			if tc.code == codes.OK {
				if err != nil || got != 1 {
					t.Fatalf("responses %d, error %v: want the fleet's clusters", got, err)
				}
				return
			}
			if got != 0 || status.Code(err) != tc.code {
				t.Fatalf("responses %d, error %v: want none and %v", got, err, tc.code)
			}
		})
	}
}

func TestParseMeshIdentity(t *testing.T) {
	for _, tc := range []struct {
		template string
		ok       bool
	}{
		{DefaultMeshIdentity, true},
		{"{serviceaccount}.{namespace}.mesh.example", false}, // namespace first
		{"spiffe://x/ns/{namespace}{serviceaccount}", false}, // nothing between
		{"spiffe://x/ns/{namespace}", false},
		{"spiffe://x/{namespace}/{namespace}/{serviceaccount}", false},
	} {
		m, err := ParseMeshIdentity(tc.template)
		if (err == nil) != tc.ok {
			t.Errorf("ParseMeshIdentity(%q): %v, want ok %v", tc.template, err, tc.ok)
		}
		if err == nil && m.String() != tc.template {
			t.Errorf("String() = %q, want %q", m.String(), tc.template)
		}
	}
}
