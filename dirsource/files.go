package dirsource

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tlsplane/tlsplane/manifests"
)

// isHidden skips dot entries: editors' swap files and the `..data` and
// `..2026_…` entries of a ConfigMap volume, whose files are also reachable
// through the top-level symlinks.
func isHidden(name string) bool { return strings.HasPrefix(name, ".") }

// listBatch bounds the entries of a directory held at once while listing.
const listBatch = 1024

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
// are not, so a loop cannot trap the walk.
func listManifests(root string) (listing, error) {
	l := listing{unusable: map[string]error{}, links: map[string]bool{}}
	err := l.list(root, nil)
	return l, err
}

// list fills l with root's listing, reusing its buffers (the periodic
// walk's, kept between walks). With a scan, every regular manifest file is
// stated too, through its directory's descriptor, and the walk pauses now
// and then (see walkPace): the periodic walk, off the event loop.
func (l *listing) list(root string, sc *scan) error {
	l.files, l.dirs = l.files[:0], l.dirs[:0]
	clear(l.unusable)
	clear(l.links)
	err := l.listDir(root, "", sc)
	slices.Sort(l.files)
	return err
}

// listDir lists the directory at path (rel from the root, "" for the root
// itself) and those under it. Only the root's own failure is an error: a
// sub-entry that vanished mid-walk is found by the next read.
func (l *listing) listDir(path, rel string, sc *scan) error {
	l.dirs = append(l.dirs, path)
	f, err := os.Open(path)
	if err != nil {
		if rel == "" {
			return err
		}
		return nil
	}
	defer f.Close()
	var fd int
	if sc != nil {
		fd = int(f.Fd())
	}
	var subdirs []string
	for {
		// In batches: 100,000 entries are not held at once.
		entries, err := f.ReadDir(listBatch)
		for _, d := range entries {
			name, typ := d.Name(), d.Type()
			if isHidden(name) {
				continue
			}
			if typ.IsDir() {
				subdirs = append(subdirs, name)
				continue
			}
			if !manifests.IsManifest(name) {
				continue
			}
			entry := name
			if rel != "" {
				entry = rel + string(filepath.Separator) + name
			}
			if typ&fs.ModeSymlink != 0 {
				l.links[entry] = true
			}
			if !typ.IsRegular() {
				if err := notAFile(filepath.Join(path, name), typ); err != nil {
					l.unusable[entry] = err
					continue
				}
			}
			l.files = append(l.files, entry)
			if sc != nil {
				sc.stat(fd, entry, name)
			}
		}
		if err != nil {
			if err != io.EOF && rel == "" {
				return err
			}
			break
		}
	}
	slices.Sort(subdirs)
	for _, name := range subdirs {
		sub := name
		if rel != "" {
			sub = rel + string(filepath.Separator) + name
		}
		l.listDir(filepath.Join(path, name), sub, sc)
	}
	return nil
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
