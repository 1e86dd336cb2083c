package crds

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
)

// The channels tlsplane can admit against: experimental is a superset of
// standard (more versions, fields and kinds).
const (
	Standard     = "standard"
	Experimental = "experimental"
)

// Channels lists the channels Load accepts.
var Channels = []string{Standard, Experimental}

// files holds config/crd/<channel>/*.yaml of sigs.k8s.io/gateway-api
// without kustomization.yaml and the safe-upgrades ValidatingAdmissionPolicy,
// which admits CRDs, not Gateway API objects.
//
//go:embed standard/*.yaml experimental/*.yaml
var files embed.FS

// channelFiles is the embedded CRD files of channel, by name.
func channelFiles(channel string) (map[string][]byte, error) {
	names, err := fs.Glob(files, path.Join(channel, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("Gateway API CRD channel %q: unknown (want one of %q)", channel, Channels)
	}
	out := make(map[string][]byte, len(names))
	for _, n := range names {
		data, err := files.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out[path.Base(n)] = data
	}
	return out, nil
}
