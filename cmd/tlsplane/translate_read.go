package main

import (
	"errors"
	"os"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// readManifests is manifests.Read for `tlsplane translate`, with one
// difference: in a directory, a document that is not a Kubernetes object
// (examples/envoy.yaml beside the manifests) is skipped with a warning,
// so `tlsplane translate examples/` works. A file named explicitly must
// hold only Kubernetes objects. YAML that does not parse is an error
// everywhere. The files are bounded by limits, each and together, and a
// directory's are read only from inside it (manifests.ReadFileIn).
// Objects the API server would refuse are left out, as a cluster would
// not hold them, and listed in refused; the rest of their files is read.
func readManifests(paths []string, limits manifests.Limits, warn func(string)) (in translator.Inputs, refused []manifests.Refusal, err error) {
	var parts []manifests.Part
	err = eachManifestFile(paths, limits, func(f manifests.DirFile, data []byte) error {
		in, err := parseManifestFile(f, data, limits, warn)
		var re *manifests.RefusedError
		if errors.As(err, &re) {
			refused = append(refused, re.Refusals...)
		} else if err != nil {
			return err
		}
		parts = append(parts, manifests.Part{Source: f.Path, Inputs: in})
		return nil
	})
	if err != nil {
		return translator.Inputs{}, nil, err
	}
	return manifests.Merge(parts, warn), refused, nil
}

// parseManifestFile parses one file read by eachManifestFile: a file of a
// directory may hold documents that are not Kubernetes objects.
func parseManifestFile(f manifests.DirFile, data []byte, limits manifests.Limits, warn func(string)) (translator.Inputs, error) {
	if f.Root != "" {
		return limits.ParseSkippingForeign(f.Path, data, warn)
	}
	return limits.Parse(f.Path, data, warn)
}

// eachManifestFile reads the files paths name (a file, or a directory's
// manifest files) in order, bounded by limits each and together, and
// gives each to visit; the first error stops it.
func eachManifestFile(paths []string, limits manifests.Limits, visit func(f manifests.DirFile, data []byte) error) error {
	var read int64
	add := func(f manifests.DirFile) error {
		data, err := limits.ReadDirFile(f)
		if err != nil {
			return err
		}
		if err := limits.Total(f.Path, int64(len(data)), read); err != nil {
			return err
		}
		read += int64(len(data))
		return visit(f, data)
	}
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !info.IsDir() {
			if err := add(manifests.DirFile{Path: p}); err != nil {
				return err
			}
			continue
		}
		files, err := manifests.Files(p)
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := add(f); err != nil {
				return err
			}
		}
	}
	return nil
}
