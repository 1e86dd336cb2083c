package dirsource

import (
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"

	"github.com/tlsplane/tlsplane/manifests"
)

// note records the path a watch event names, relative to the root, in
// named; it returns true when the event needs a walk of the whole
// directory instead (the directory itself changed, or a name that cannot
// be placed in it). Hidden names (an editor's swap file, an atomic
// writer's temporary file, a ConfigMap volume's ..data) name no manifest:
// the read the event schedules still reads every symlinked manifest, which
// is all a ConfigMap volume's swap changes.
func (s *Source) note(ev fsnotify.Event, named map[string]bool) (whole bool) {
	rel, ok := s.relative(ev.Name)
	if !ok || rel == "." {
		return true
	}
	if hiddenPath(rel) {
		return false
	}
	if (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) && s.unwatched(filepath.Join(s.root, rel)) {
		return true // a directory went, and its files with it
	}
	named[rel] = true
	return false
}

// renamedIntoPlace reports the manifest path ev created when ev is the
// second half of a rename within one directory, last (the event before)
// its first: what atomic writers and editors do, a file complete the
// moment it appears, read without waiting for settle. The kernel queues a
// rename's two halves together. A ConfigMap volume's ..data swap is such a
// rename too (rel is empty then): it changes what every symlinked manifest
// reads, and the read after any event reads those. A file created any
// other way (or moved in from an unwatched directory, which looks the
// same) may still be being written, and waits for settle.
func (s *Source) renamedIntoPlace(last, ev fsnotify.Event) (rel string, ok bool) {
	if !ev.Has(fsnotify.Create) || !last.Has(fsnotify.Rename) || filepath.Dir(last.Name) != filepath.Dir(ev.Name) {
		return "", false
	}
	rel, ok = s.relative(ev.Name)
	switch {
	case !ok || rel == ".":
		return "", false
	case rel == configMapData:
		return "", true
	case hiddenPath(rel) || !manifests.IsManifest(filepath.Base(rel)):
		return "", false
	}
	return rel, true
}

// configMapData is the symlink a ConfigMap volume swaps atomically; the
// volume's files are symlinks through it.
const configMapData = "..data"

// unwatched forgets the watches of dir and the directories under it, which
// the kernel dropped as it went: a directory re-created before the next
// walk (rm -r, then mkdir) is watched again by that walk. It reports
// whether dir was watched.
func (s *Source) unwatched(dir string) (was bool) {
	for d := range s.watched {
		if d == dir || strings.HasPrefix(d, dir+string(filepath.Separator)) {
			delete(s.watched, d)
			was = true
		}
	}
	return was
}

// relative places an event's path under the root the last walk resolved
// (subdirectory watches) or under the directory as given (its own watch).
func (s *Source) relative(name string) (string, bool) {
	for _, base := range []string{s.root, s.opts.Dir} {
		if base == "" {
			continue
		}
		rel, err := filepath.Rel(base, name)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel, true
		}
	}
	return "", false
}

// hiddenPath reports whether any element of rel is hidden: the walk skips
// such entries and never watches inside them.
func hiddenPath(rel string) bool {
	for _, elem := range strings.Split(rel, string(filepath.Separator)) {
		if isHidden(elem) {
			return true
		}
	}
	return false
}
