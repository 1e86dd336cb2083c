package manifests

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tlsplane/tlsplane/translator"
)

// IsManifest reports whether a file in a directory is read: only *.yaml,
// *.yml and *.json, so certificates and scripts can live beside manifests.
func IsManifest(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// Read parses files and directories, in the order given; a directory is
// walked in path order, skipping dot entries (editor swap files, a
// ConfigMap volume's `..data`). A file named explicitly is read whatever
// its extension. An object defined twice is kept from the first file, with
// a warning, as the directory source does. The files' sizes together are
// bounded by TotalBytes.
func (l Limits) Read(paths []string, warn func(string)) (translator.Inputs, error) {
	if warn == nil {
		warn = func(string) {}
	}
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return translator.Inputs{}, err
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		found, err := Files(p)
		if err != nil {
			return translator.Inputs{}, err
		}
		files = append(files, found...)
	}
	parts := make([]Part, 0, len(files))
	var read int64
	for _, f := range files {
		data, err := l.ReadFile(f)
		if err != nil {
			return translator.Inputs{}, err
		}
		if err := l.Total(f, int64(len(data)), read); err != nil {
			return translator.Inputs{}, err
		}
		read += int64(len(data))
		in, err := l.Parse(f, data, warn)
		if err != nil {
			return translator.Inputs{}, err
		}
		parts = append(parts, Part{Source: f, Inputs: in})
	}
	return Merge(parts, warn), nil
}

// Read is DefaultLimits.Read.
func Read(paths []string, warn func(string)) (translator.Inputs, error) {
	return DefaultLimits.Read(paths, warn)
}

// Files lists a directory's manifest files, recursively, sorted, dot
// entries skipped: the files Read reads from a directory.
func Files(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && IsManifest(d.Name()) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading directory %s: %w", dir, err)
	}
	sort.Strings(files)
	return files, nil
}
