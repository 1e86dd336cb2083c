package dirsource

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tlsplane/tlsplane/manifests"
)

// isHidden skips dot entries: editors' swap files and the `..data` and
// `..2026_…` entries of a ConfigMap volume, whose files are also reachable
// through the top-level symlinks.
func isHidden(name string) bool { return strings.HasPrefix(name, ".") }

// listing is one walk of the directory: manifest files by path relative to
// the root, manifest entries that cannot be read as files, and the
// directories to watch.
type listing struct {
	files []string
	// unusable are manifest-named entries that exist but are not (links
	// to) regular files: a dangling symlink, a link to a directory, a
	// FIFO. They are errors for their path, not deletions.
	unusable map[string]error
	// links are the manifest entries that are symlinks, usable or not.
	links map[string]bool
	dirs  []string
}

// listManifests walks root (already resolved through symlinks). Symlinked
// files are followed, as a ConfigMap volume needs; symlinked directories
// are not, so a loop cannot trap the walk. paced pauses now and then
// (the periodic walk, off the event loop; see walkPace).
func listManifests(root string, paced bool) (listing, error) {
	l := listing{unusable: map[string]error{}, links: map[string]bool{}}
	entries := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if entries++; paced && entries%walkPace == 0 {
			time.Sleep(walkPause)
		}
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
		rel, relErr := filepath.Rel(root, path)
		if relErr != nil {
			return relErr
		}
		if d.Type()&fs.ModeSymlink != 0 {
			l.links[rel] = true
		}
		if err := notAFile(path, d.Type()); err != nil {
			l.unusable[rel] = err
			return nil
		}
		l.files = append(l.files, rel)
		return nil
	})
	sort.Strings(l.files)
	return l, err
}

// notAFile says why the entry at path, of the given type, cannot be read
// as a manifest file, or returns nil when it can.
func notAFile(path string, typ fs.FileMode) error {
	if typ&fs.ModeSymlink == 0 {
		if typ.IsRegular() {
			return nil
		}
		return fmt.Errorf("not a regular file but %s", kind(typ))
	}
	info, err := os.Stat(path)
	if err != nil {
		target, _ := os.Readlink(path)
		return fmt.Errorf("symlink to %q cannot be followed: %w", manifests.Excerpt(target), err)
	}
	if !info.Mode().IsRegular() {
		target, _ := os.Readlink(path)
		return fmt.Errorf("symlink to %q, which is not a regular file but %s", manifests.Excerpt(target), kind(info.Mode()))
	}
	return nil
}

// kind names a file type for messages.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "of type " + m.Type().String()
	}
}
