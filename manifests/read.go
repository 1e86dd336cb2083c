package manifests

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
// ConfigMap volume's `..data`), and its files are read only from inside
// it (see ReadFileIn). A file named explicitly is read whatever its
// extension, wherever its links lead. An object defined twice is kept from
// the first file, with a warning, as the directory source does. The
// files' sizes together are bounded by TotalBytes.
func (l Limits) Read(paths []string, warn func(string)) (translator.Inputs, error) {
	if warn == nil {
		warn = func(string) {}
	}
	var files []DirFile
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return translator.Inputs{}, err
		}
		if !info.IsDir() {
			files = append(files, DirFile{Path: p})
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
		data, err := l.ReadDirFile(f)
		if err != nil {
			return translator.Inputs{}, err
		}
		if err := l.Total(f.Path, int64(len(data)), read); err != nil {
			return translator.Inputs{}, err
		}
		read += int64(len(data))
		in, err := l.Parse(f.Path, data, warn)
		if err != nil {
			return translator.Inputs{}, err
		}
		parts = append(parts, Part{Source: f.Path, Inputs: in})
	}
	return Merge(parts, warn), nil
}

// Read is DefaultLimits.Read.
func Read(paths []string, warn func(string)) (translator.Inputs, error) {
	return DefaultLimits.Read(paths, warn)
}

// DirFile is a manifest file Files found: Path as the directory was named
// (for messages), Rel under Root, the directory resolved through its
// symlinks. A file named on its own has Path only.
type DirFile struct{ Path, Root, Rel string }

// ReadDirFile reads f: from inside its directory (ReadFileIn), or, named
// on its own, as ReadFile does.
func (l Limits) ReadDirFile(f DirFile) ([]byte, error) {
	if f.Root == "" {
		return l.ReadFile(f.Path)
	}
	return l.ReadFileIn(f.Root, f.Rel, f.Path)
}

// Files lists a directory's manifest files, recursively, sorted, dot
// entries skipped: the files Read reads from a directory. The directory
// may be a symlink (a mounted path may be one); symlinked directories
// inside it are not walked.
func Files(dir string) ([]DirFile, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("reading directory %s: %w", dir, err)
	}
	var files []DirFile
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !IsManifest(d.Name()) {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		files = append(files, DirFile{Path: filepath.Join(dir, rel), Root: root, Rel: rel})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading directory %s: %w", dir, err)
	}
	slices.SortFunc(files, func(a, b DirFile) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}
