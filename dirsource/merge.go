package dirsource

import (
	"log/slog"
	"path/filepath"

	"github.com/tlsplane/tlsplane/translator"
)

// objectKey names one object across files, to find duplicates.
type objectKey struct{ kind, namespace, name string }

// merge joins the last good objects of every file, in path order. An object
// defined in two files is kept from the first path only, so the translator
// never sees two Services with one name.
func merge(root string, files map[string]*fileState, paths []string, log *slog.Logger) translator.Inputs {
	var in translator.Inputs
	owner := map[objectKey]string{}
	keep := func(kind, namespace, name, path string) bool {
		k := objectKey{kind, namespace, name}
		if first, dup := owner[k]; dup {
			log.Warn("duplicate object ignored", "kind", kind, "object", namespace+"/"+name,
				"file", filepath.Join(root, path), "keptFrom", filepath.Join(root, first))
			return false
		}
		owner[k] = path
		return true
	}
	for _, path := range paths {
		objs := files[path].objects
		for _, o := range objs.Policies {
			if keep("BackendTLSPolicy", o.Namespace, o.Name, path) {
				in.Policies = append(in.Policies, o)
			}
		}
		for _, o := range objs.Services {
			if keep("Service", o.Namespace, o.Name, path) {
				in.Services = append(in.Services, o)
			}
		}
		for _, o := range objs.EndpointSlices {
			if keep("EndpointSlice", o.Namespace, o.Name, path) {
				in.EndpointSlices = append(in.EndpointSlices, o)
			}
		}
		for _, o := range objs.ConfigMaps {
			if keep("ConfigMap", o.Namespace, o.Name, path) {
				in.ConfigMaps = append(in.ConfigMaps, o)
			}
		}
		for _, o := range objs.Secrets {
			if keep("Secret", o.Namespace, o.Name, path) {
				in.Secrets = append(in.Secrets, o)
			}
		}
	}
	return in
}
