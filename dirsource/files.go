package dirsource

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tlsplane/tlsplane/manifests"
)

// isHidden skips dot entries: editors' swap files and the `..data` and
// `..2026_…` entries of a ConfigMap volume, whose files are also reachable
// through the top-level symlinks.
func isHidden(name string) bool { return strings.HasPrefix(name, ".") }

// listing is one walk of the directory: manifest files by path relative to
// the root, and the directories to watch.
type listing struct {
	files []string
	dirs  []string
}

// listManifests walks root (already resolved through symlinks). Symlinked
// files are followed, as a ConfigMap volume needs; symlinked directories
// are not, so a loop cannot trap the walk.
func listManifests(root string) (listing, error) {
	var l listing
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			// A sub-entry vanished mid-walk: the next event rescans.
			return nil
		}
		if path != root && isHidden(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			l.dirs = append(l.dirs, path)
			return nil
		}
		if !manifests.IsManifest(d.Name()) {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			info, statErr := os.Stat(path)
			if statErr != nil || !info.Mode().IsRegular() {
				return nil
			}
		} else if !d.Type().IsRegular() {
			return nil
		}
		rel, relErr := filepath.Rel(root, path)
		if relErr != nil {
			return relErr
		}
		l.files = append(l.files, rel)
		return nil
	})
	sort.Strings(l.files)
	return l, err
}
