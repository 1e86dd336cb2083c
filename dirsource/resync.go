package dirsource

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/fsnotify/fsnotify"
)

// walked is one periodic walk, done off Run's goroutine so an edit never
// waits for it: the listing, and each listed file's metadata then.
type walked struct {
	root  string
	list  listing
	stats map[string]stamp // by path relative to root; regular files only
	err   error
}

// walk lists the directory and stats every manifest file. It touches no
// state of the source: Run's goroutine compares what it found.
func walk(dir string) walked {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return walked{err: err}
	}
	list, err := listManifests(root)
	if err != nil {
		return walked{err: err}
	}
	stats := make(map[string]stamp, len(list.files))
	for _, rel := range list.files {
		info, err := os.Stat(filepath.Join(root, rel))
		if err != nil || !info.Mode().IsRegular() {
			continue // read again by the event loop, which finds out why
		}
		stats[rel] = stamp{size: info.Size(), mtime: info.ModTime(), inode: inodeOf(info)}
	}
	return walked{root: root, list: list, stats: stats}
}

// startWalk runs walk on its own goroutine, unless one is running; its
// result arrives on walks.
func (s *Source) startWalk(walking *bool, walks chan<- walked) {
	if *walking {
		return
	}
	*walking = true
	go func() { walks <- walk(s.opts.Dir) }()
}

// applyWalk reads only the paths the walk found changed, as events
// naming them would: the walk's findings may be stale by now, and reread
// looks at each path again. A change of the directories themselves (the
// root moved, a directory came or went) is rare and needs the whole
// synchronous read, which also watches them.
func (s *Source) applyWalk(watcher *fsnotify.Watcher, w walked, changed func()) error {
	if w.err != nil || w.root != s.root || !s.sameDirs(watcher, w) {
		return s.read(watcher, true, nil, changed)
	}
	var paths []string
	listed := make(map[string]bool, len(w.list.files)+len(w.list.unusable))
	for _, rel := range w.list.files {
		listed[rel] = true
		st, ok := s.files[rel], false
		if st != nil {
			var now stamp
			if now, ok = w.stats[rel]; ok {
				ok = st.holds(now, w.list.links[rel])
			}
		}
		if !ok {
			paths = append(paths, rel)
		}
	}
	for rel := range w.list.unusable {
		listed[rel] = true
		paths = append(paths, rel)
	}
	for rel, st := range s.files {
		if !listed[rel] && !st.replaced {
			paths = append(paths, rel) // gone, unless it came back since
		}
	}
	if len(paths) == 0 {
		return nil
	}
	slices.Sort(paths)
	return s.read(watcher, false, paths, changed)
}

// sameDirs reports whether the walk found exactly the directories watched,
// none of them where a file was, and the directory itself still watched.
func (s *Source) sameDirs(watcher *fsnotify.Watcher, w walked) bool {
	if watcher != nil && !slices.Contains(watcher.WatchList(), s.opts.Dir) {
		return false
	}
	seen := 0
	for _, d := range w.list.dirs {
		if d == w.root {
			continue
		}
		rel, err := filepath.Rel(w.root, d)
		if err != nil || !s.watched[d] {
			return false
		}
		if st := s.files[rel]; st != nil && !st.replaced {
			return false
		}
		seen++
	}
	if seen != len(s.watched) {
		return false
	}
	for _, st := range s.files {
		if st.replaced {
			return false
		}
	}
	return true
}
