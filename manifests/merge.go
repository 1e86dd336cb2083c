package manifests

import (
	"fmt"

	"github.com/tlsplane/tlsplane/translator"
)

// Part is the objects of one source file.
type Part struct {
	Source string
	Inputs translator.Inputs
}

// Merge joins parts in order. An object (kind, namespace, name) defined in
// two parts is kept from the first, with a warning naming both sources, so
// the translator never sees two objects with one name.
func Merge(parts []Part, warn func(string)) translator.Inputs {
	if warn == nil {
		warn = func(string) {}
	}
	var out translator.Inputs
	owner := map[[3]string]string{}
	keep := func(kind, namespace, name, source string) bool {
		k := [3]string{kind, namespace, name}
		if first, dup := owner[k]; dup {
			warn(fmt.Sprintf("%s: %s %s/%s ignored: already defined in %s", source, kind, namespace, name, first))
			return false
		}
		owner[k] = source
		return true
	}
	for _, p := range parts {
		for _, o := range p.Inputs.Policies {
			if keep("BackendTLSPolicy", o.Namespace, o.Name, p.Source) {
				out.Policies = append(out.Policies, o)
			}
		}
		for _, o := range p.Inputs.Services {
			if keep("Service", o.Namespace, o.Name, p.Source) {
				out.Services = append(out.Services, o)
			}
		}
		for _, o := range p.Inputs.EndpointSlices {
			if keep("EndpointSlice", o.Namespace, o.Name, p.Source) {
				out.EndpointSlices = append(out.EndpointSlices, o)
			}
		}
		for _, o := range p.Inputs.ConfigMaps {
			if keep("ConfigMap", o.Namespace, o.Name, p.Source) {
				out.ConfigMaps = append(out.ConfigMaps, o)
			}
		}
		for _, o := range p.Inputs.Secrets {
			if keep("Secret", o.Namespace, o.Name, p.Source) {
				out.Secrets = append(out.Secrets, o)
			}
		}
	}
	return out
}
