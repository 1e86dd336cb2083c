package main

import (
	"flag"

	"github.com/tlsplane/tlsplane/translator/mesh"
)

// registerMeshNamespaces adds --mesh-namespaces, shared by serve and
// translate: the label selector of the namespaces in the mesh.
func registerMeshNamespaces(fs *flag.FlagSet, sel **mesh.Selector) {
	const name = "mesh-namespaces"
	fs.Func(name, "label `SELECTOR` of the namespaces in the mesh (docs/mesh.md): their Services are mesh route parents and their workloads get a fleet, Mesh/<namespace>; "+
		"default "+mesh.DefaultSelector.String()+"; e.g. 'gateway-conformance in (mesh,mesh-consumer)' for the conformance suite's namespaces", func(v string) error {
		s, err := mesh.ParseSelector(v)
		if err != nil {
			return err
		}
		*sel = s
		return nil
	})
}
