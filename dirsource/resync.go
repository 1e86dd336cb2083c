package dirsource

import (
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
)

// walkPace files are stated between pauses of walkPause: 10,000 files
// take 4 ms longer to walk.
const (
	walkPace  = 250
	walkPause = 100 * time.Microsecond
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
	list, err := listManifests(root, true)
	if err != nil {
		return walked{err: err}
	}
	stats := make(map[string]stamp, len(list.files))
	for i, rel := range list.files {
		if i%walkPace == walkPace-1 {
			// Leave the cores to the event loop and the pipeline now and
			// then: on two cores a walk running flat out tripled the tail
			// of an edit's latency.
			time.Sleep(walkPause)
		}
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

// walkChunk bounds the files compared per turn of Run's loop: an event
// waits for one chunk at most (under 0.1 ms at 10,000 files), not for the whole walk.
const walkChunk = 250

// applying is a finished walk being compared, a chunk per turn.
type applying struct {
	w     walked
	next  int      // index in w.list.files of the next file to compare
	paths []string // paths found changed so far
}

// beginWalk starts comparing a finished walk, or returns nil after the
// whole synchronous read when the directories themselves changed (the root
// moved, a directory came or went): rare, and that read also watches them.
func (s *Source) beginWalk(watcher *fsnotify.Watcher, w walked, changed func()) (*applying, error) {
	s.walks, s.seen = s.walks+1, 0
	if w.err != nil || w.root != s.root || !s.sameDirs(watcher, w) {
		return nil, s.read(watcher, true, nil, changed)
	}
	return &applying{w: w}, nil
}

// applyChunk compares the next chunk of the walk's files with what was
// read; after the last it reads the paths found changed, as events naming
// them would: the walk's findings may be stale by now, and reread looks
// at each path again. It reports done after that read.
func (s *Source) applyChunk(watcher *fsnotify.Watcher, a *applying, changed func()) (done bool, err error) {
	if a.w.root != s.root {
		return true, nil // a whole read ran meanwhile
	}
	files := a.w.list.files
	for end := min(a.next+walkChunk, len(files)); a.next < end; a.next++ {
		rel := files[a.next]
		st := s.files[rel]
		if st != nil {
			s.see(st)
			if now, ok := a.w.stats[rel]; ok && st.holds(now, a.w.list.links[rel]) {
				continue
			}
		}
		a.paths = append(a.paths, rel)
	}
	if a.next < len(files) {
		return false, nil
	}
	for rel := range a.w.list.unusable {
		if st := s.files[rel]; st != nil {
			s.see(st)
		}
		a.paths = append(a.paths, rel)
	}
	if s.seen == len(s.files) {
		// Every file is listed: nothing went, and no file was replaced by
		// a directory (which the walk lists as one). A walk of 100,000
		// files is spared a 10 ms look at each.
		return true, s.readChanged(watcher, a.paths, changed)
	}
	for rel, st := range s.files {
		if st.replaced {
			return true, s.read(watcher, true, nil, changed)
		}
		if st.seen != s.walks {
			a.paths = append(a.paths, rel) // gone, unless it came back since
		}
	}
	return true, s.readChanged(watcher, a.paths, changed)
}

// see marks st listed by the walk being compared.
func (s *Source) see(st *fileState) {
	if st.seen != s.walks {
		st.seen = s.walks
		s.seen++
	}
}

// readChanged reads the paths a walk found changed, if any.
func (s *Source) readChanged(watcher *fsnotify.Watcher, paths []string, changed func()) error {
	if len(paths) == 0 {
		return nil
	}
	slices.Sort(paths)
	return s.read(watcher, false, slices.Compact(paths), changed)
}

// sameDirs reports whether the walk found exactly the directories watched,
// none of them where a file is served, and the directory itself still
// watched.
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
	return seen == len(s.watched)
}
