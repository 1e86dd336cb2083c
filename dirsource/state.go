package dirsource

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/fsnotify/fsnotify"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// fileState is what the source remembers of one manifest file.
type fileState struct {
	// sum is the hash of the content last read, good or bad, so an
	// unchanged broken file is reported once, not on every event.
	sum [sha256.Size]byte
	// objects are the last good objects: kept while the file is broken.
	objects translator.Inputs
	// failing is set while the current content cannot be read or parsed.
	failing bool
}

// rescan reads every manifest file whose content changed since the last
// read, forgets deleted files, and stores a new Inputs snapshot when any
// file's objects changed. It reports whether they did. Adding watches for
// new subdirectories happens here too, since a walk finds them.
func (s *Source) rescan(watcher *fsnotify.Watcher) (bool, error) {
	root, err := filepath.EvalSymlinks(s.opts.Dir)
	if err != nil {
		return false, fmt.Errorf("directory source %s: %w", s.opts.Dir, err)
	}
	s.rewatchRoot(watcher)
	list, err := listManifests(root)
	if err != nil {
		return false, fmt.Errorf("directory source %s: %w", s.opts.Dir, err)
	}
	s.watchDirs(watcher, root, list.dirs)

	changed := false
	present := make(map[string]bool, len(list.files))
	for _, rel := range list.files {
		shown := filepath.Join(s.opts.Dir, rel)
		data, err := os.ReadFile(filepath.Join(root, rel))
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone since the walk: treated as deleted
		}
		present[rel] = true
		st := s.files[rel]
		if st == nil {
			st = &fileState{}
			s.files[rel] = st
		}
		if err != nil {
			st.sum = [sha256.Size]byte{} // re-parse once it is readable again
			s.fileFailed(st, shown, err)
			continue
		}
		sum := sha256.Sum256(data)
		if sum == st.sum {
			continue // unchanged: good, or broken and reported already
		}
		st.sum = sum
		objs, err := s.opts.Parse(shown, data)
		if err != nil {
			s.fileFailed(st, shown, err)
			continue
		}
		if st.failing {
			s.log.Info("manifest file parses again", "file", shown)
		}
		st.failing = false
		st.objects = objs
		changed = true
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
		// Path order, as `tlsplane translate DIR` merges the same files.
		parts := make([]manifests.Part, 0, len(list.files))
		for _, rel := range list.files {
			if st := s.files[rel]; st != nil {
				parts = append(parts, manifests.Part{Source: filepath.Join(s.opts.Dir, rel), Inputs: st.objects})
			}
		}
		in := manifests.Merge(parts, func(msg string) { s.log.Warn("duplicate object ignored", "reason", msg) })
		s.current.Store(&in)
	}
	return changed, nil
}

// fileFailed reports a file that cannot be used; its last good objects stay.
func (s *Source) fileFailed(st *fileState, shown string, err error) {
	s.metrics.fileErrors.Inc()
	st.failing = true
	s.log.Error("manifest file ignored; keeping its last good objects", "file", shown, "error", err)
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
