package main

import (
	"flag"
	"fmt"

	"github.com/tlsplane/tlsplane/xds"
)

// registerMeshIdentityFlag is --xds-mesh-identity: on by default, because
// a sidecar's certificate is its workload's (the ServiceAccount's SPIFFE ID
// that SPIRE or cert-manager's CSI driver issue), not one per fleet, and no
// Gateway fleet can be named Mesh/<namespace>, so the default changes no
// Gateway fleet's rule (docs/mesh.md).
func registerMeshIdentityFlag(fs *flag.FlagSet, template *string) {
	fs.StringVar(template, "xds-mesh-identity", xds.DefaultMeshIdentity, "with mutual TLS, the identity (URI SAN) a sidecar's client certificate must carry to read its namespace's mesh fleet Mesh/<namespace>: "+
		xds.NamespacePlaceholder+" is the fleet's namespace, "+xds.ServiceAccountPlaceholder+" any ServiceAccount name; empty: mesh fleets follow --xds-fleet-identity like any fleet")
}

// withMeshIdentity is sec with mesh fleets bound to ServiceAccounts by
// template; an empty template leaves them to the fleet template.
func withMeshIdentity(sec xds.Security, template string) (xds.Security, error) {
	if template == "" || sec.Fleet == nil {
		return sec, nil
	}
	mesh, err := xds.ParseMeshIdentity(template)
	if err != nil {
		return xds.Security{}, fmt.Errorf("--xds-mesh-identity: %w", err)
	}
	sec.Fleet = sec.Fleet.WithMesh(mesh)
	return sec, nil
}
