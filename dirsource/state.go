package dirsource

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/fsnotify/fsnotify"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// suspectRereads bounds the extra reads, settle apart, that a file found in
// a state writers pass through gets before that state is believed: emptied
// (an in-place rewrite truncates before it writes) or a dangling symlink (a
// ConfigMap volume's removed keys dangle between the kubelet's ..data swap
// and its removal of their links). The objects stay served meanwhile.
const suspectRereads = 2

// fileState is what the source remembers of one manifest path.
type fileState struct {
	// sum is the hash of the content last read, good or bad, so an
	// unchanged broken file is reported once, not on every event. It is
	// zero while the path cannot be read, so it is parsed when it can.
	sum [sha256.Size]byte
	// objects are the last good objects: kept while the file is broken,
	// unreadable, a dangling symlink or replaced by a directory.
	objects translator.Inputs
	// failing is set while the current content cannot be read or parsed.
	failing bool
	// problem is the error last reported, so an unchanged unreadable path
	// is reported once, not on every event.
	problem string
	// suspect counts consecutive reads that found the path emptied or
	// dangling; see suspectRereads.
	suspect int
	// replaced is set while the path is a directory: its kept objects
	// yield to the manifests inside it.
	replaced bool
}

// rescan reads every manifest file whose content changed since the last
// read, forgets deleted files, and stores a new Inputs snapshot when any
// file's objects changed. It reports whether they did, and whether a path
// is suspect and the directory should be read again after settle. Adding
// watches for new subdirectories happens here too, since a walk finds them.
func (s *Source) rescan(watcher *fsnotify.Watcher) (changed, again bool, err error) {
	root, err := filepath.EvalSymlinks(s.opts.Dir)
	if err != nil {
		return false, false, fmt.Errorf("directory source %s: %w", s.opts.Dir, err)
	}
	s.rewatchRoot(watcher)
	list, err := listManifests(root)
	if err != nil {
		return false, false, fmt.Errorf("directory source %s: %w", s.opts.Dir, err)
	}
	s.watchDirs(watcher, root, list.dirs)

	present := make(map[string]bool, len(list.files))
	for _, rel := range list.files {
		shown := filepath.Join(s.opts.Dir, rel)
		data, err := manifests.ReadFile(filepath.Join(root, rel))
		if errors.Is(err, fs.ErrNotExist) {
			info, lerr := os.Lstat(filepath.Join(root, rel))
			if lerr != nil {
				continue // gone since the walk: treated as deleted
			}
			// Still there, so it turned into a dangling symlink meanwhile.
			if perr := notAFile(filepath.Join(root, rel), info.Mode().Type()); perr != nil {
				err = perr
			}
			list.unusable[rel] = err
			continue
		}
		present[rel] = true
		st := s.state(rel)
		st.replaced = false
		if err != nil {
			st.sum = [sha256.Size]byte{} // re-parse once it is readable again
			s.readFailed(st, shown, err)
			continue
		}
		sum := sha256.Sum256(data)
		if sum == st.sum {
			st.suspect = 0
			continue // unchanged: good, or broken and reported already
		}
		objs, err := s.opts.Parse(shown, data)
		if err != nil {
			st.sum = sum
			s.fileFailed(st, shown, err)
			continue
		}
		forgetResourceVersions(objs)
		if count(objs) == 0 && count(st.objects) > 0 {
			// Emptied, or caught between an in-place rewrite's truncate
			// and its write: believed only if it stays so.
			if st.suspect < suspectRereads {
				st.suspect++
				again = true
				continue
			}
			s.log.Info("manifest file has no objects any more; its objects are withdrawn", "file", shown)
		}
		st.suspect = 0
		st.sum = sum
		if st.failing {
			s.log.Info("manifest file parses again", "file", shown)
		}
		st.failing, st.problem = false, ""
		st.objects = objs
		changed = true
	}
	for _, rel := range slices.Sorted(maps.Keys(list.unusable)) {
		err := list.unusable[rel]
		st := s.state(rel)
		present[rel] = true
		st.sum = [sha256.Size]byte{}
		if st.replaced {
			st.replaced = false
			changed = true // its objects move back to their place in path order
		}
		if errors.Is(err, fs.ErrNotExist) && !st.failing && st.suspect < suspectRereads {
			st.suspect++
			again = true
			continue
		}
		s.readFailed(st, filepath.Join(s.opts.Dir, rel), err)
	}
	for _, dir := range list.dirs {
		rel, err := filepath.Rel(root, dir)
		st := s.files[rel]
		if err != nil || st == nil {
			continue
		}
		// A file replaced by a directory: an error for the file's path, and
		// the directory's manifests are read as files of their own.
		present[rel] = true
		st.sum = [sha256.Size]byte{}
		if !st.replaced {
			st.replaced = true
			changed = true // its objects now yield to the directory's
		}
		s.readFailed(st, filepath.Join(s.opts.Dir, rel), errors.New("replaced by a directory; its manifests are read as files of their own"))
	}
	for rel := range s.files {
		if !present[rel] {
			s.log.Info("manifest file removed; its objects are withdrawn", "file", filepath.Join(s.opts.Dir, rel))
			delete(s.files, rel)
			changed = true
		}
	}
	s.countFiles()
	if changed {
		s.current.Store(new(s.merge()))
	}
	return changed, again, nil
}

// merge combines every path's objects in path order, as `tlsplane
// translate DIR` merges the same files; the first of duplicates wins. Kept
// objects of a path that is now a directory come last, so the live
// manifests that replaced them win.
func (s *Source) merge() translator.Inputs {
	rels := slices.Sorted(maps.Keys(s.files))
	slices.SortStableFunc(rels, func(a, b string) int {
		ra, rb := s.files[a].replaced, s.files[b].replaced
		switch {
		case ra == rb:
			return 0
		case rb:
			return -1
		default:
			return 1
		}
	})
	parts := make([]manifests.Part, 0, len(rels))
	for _, rel := range rels {
		parts = append(parts, manifests.Part{Source: filepath.Join(s.opts.Dir, rel), Inputs: s.files[rel].objects})
	}
	return manifests.Merge(parts, func(msg string) { s.log.Warn("duplicate object ignored", "reason", msg) })
}

// state returns rel's state, creating it.
func (s *Source) state(rel string) *fileState {
	st := s.files[rel]
	if st == nil {
		st = &fileState{}
		s.files[rel] = st
	}
	return st
}

// readFailed reports a path that cannot be read, once per distinct error.
func (s *Source) readFailed(st *fileState, shown string, err error) {
	if st.failing && st.problem == err.Error() {
		return
	}
	s.fileFailed(st, shown, err)
}

// fileFailed reports a file that cannot be used; its last good objects stay.
func (s *Source) fileFailed(st *fileState, shown string, err error) {
	st.failing, st.problem, st.suspect = true, err.Error(), 0
	s.log.Error("manifest file ignored; keeping its last good objects", "file", shown, "error", err)
	s.metrics.fileErrors.Inc() // after the log line, so a reader of both sees it
}

// countFiles refreshes the file gauges.
func (s *Source) countFiles() {
	failing := 0
	for _, st := range s.files {
		if st.failing {
			failing++
		}
	}
	s.metrics.files.Set(float64(len(s.files)))
	s.metrics.failingFiles.Set(float64(failing))
}

// rewatchRoot watches the directory again after it was deleted and
// re-created (a deleted directory's watch ends); the resync finds it.
func (s *Source) rewatchRoot(watcher *fsnotify.Watcher) {
	if watcher == nil || slices.Contains(watcher.WatchList(), s.opts.Dir) {
		return
	}
	if err := watcher.Add(s.opts.Dir); err != nil {
		s.log.Warn("cannot watch the directory again; it is re-read every resync", "error", err)
		return
	}
	s.log.Info("watching the directory again")
}

// watchDirs adds a watch for every directory not yet watched; inotify is
// not recursive. Removed directories drop their watch by themselves.
func (s *Source) watchDirs(watcher *fsnotify.Watcher, root string, dirs []string) {
	if watcher == nil {
		return
	}
	present := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		present[d] = true
	}
	for d := range s.watched {
		if !present[d] {
			delete(s.watched, d) // re-added if the directory comes back
		}
	}
	for _, d := range dirs {
		if s.watched[d] || d == root {
			continue
		}
		if err := watcher.Add(d); err != nil {
			s.log.Warn("cannot watch subdirectory; it is re-read every resync", "dir", d, "error", err)
			continue
		}
		s.watched[d] = true
	}
}
