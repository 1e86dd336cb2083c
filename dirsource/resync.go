package dirsource

import (
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// walkPace files are listed and stated between pauses of walkPause,
// leaving the cores to the event loop and the pipeline now and then: on
// two cores a walk running flat out tripled the tail of an edit's latency.
const (
	walkPace  = 125
	walkPause = 100 * time.Microsecond
)

// walked is one periodic walk, done off Run's goroutine so an edit never
// waits for it: the listing, and each listed file's metadata then. Its
// buffers are handed back and forth between walks (Source.spare): a walk
// of 100,000 unchanged files allocated 74 MB when each was new, and the
// collections it caused held up the event loop.
type walked struct {
	root  string
	list  listing
	stats map[string]stamp // by path relative to root; regular files only
	err   error
}

// scan records each listed file's stat into stats, pacing the walk.
type scan struct {
	stats   map[string]stamp
	entries int
	st      unix.Stat_t
}

// stat records the metadata of name, in the directory open as fd, as
// entry's: through the descriptor, with no path built and nothing
// allocated but the call's copy of name. A file it cannot stat, or no
// longer a regular file, is left out: the event loop reads it again and
// finds out why.
func (sc *scan) stat(fd int, entry, name string) {
	if sc.entries++; sc.entries%walkPace == 0 {
		time.Sleep(walkPause)
	}
	if err := unix.Fstatat(fd, name, &sc.st, 0); err != nil || sc.st.Mode&unix.S_IFMT != unix.S_IFREG {
		return
	}
	sc.stats[entry] = stamp{size: sc.st.Size, mtime: time.Unix(sc.st.Mtim.Sec, sc.st.Mtim.Nsec), inode: uint64(sc.st.Ino)} //nolint:unconvert // Ino's width differs by platform
}

// walk lists the directory and stats every manifest file, into w's
// buffers. It touches no state of the source: Run's goroutine compares
// what it found.
func walk(dir string, w *walked) {
	w.root, w.err = "", nil
	if w.stats == nil {
		w.stats = map[string]stamp{}
		w.list = listing{unusable: map[string]error{}, links: map[string]bool{}}
	}
	clear(w.stats)
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		w.err = err
		return
	}
	if err := w.list.list(root, &scan{stats: w.stats}); err != nil {
		w.err = err
		return
	}
	w.root = root
}

// startWalk runs walk on its own goroutine, unless one is running; its
// result arrives on walks.
func (s *Source) startWalk(walking *bool, walks chan<- *walked) {
	if *walking {
		return
	}
	*walking = true
	w := s.spare
	s.spare = nil
	if w == nil {
		w = &walked{}
	}
	go func() {
		start := time.Now()
		walk(s.opts.Dir, w)
		s.metrics.walks.Observe(time.Since(start).Seconds())
		walks <- w
	}()
}

// A finished walk is compared in turns of Run's loop, each bounded in time
// (walkTurn, the clock read every walkCheck files) and in count
// (walkChunk), walkGap apart: an event waits for one turn at most, and
// between turns the loop sleeps, so the comparison of 100,000 files (25 ms
// of CPU) never holds the core an edit needs. Back to back, its turns kept
// the loop's thread busy for that long, and on a loaded machine the kernel
// preempted it mid-turn for up to 18 ms.
const (
	walkChunk = 1000
	walkCheck = 32
	walkTurn  = 100 * time.Microsecond
	walkGap   = time.Millisecond
)

// applying is a finished walk being compared, a turn at a time.
type applying struct {
	w     *walked
	next  int      // index in w.list.files of the next file to compare
	paths []string // paths found changed so far
}

// beginWalk starts comparing a finished walk, or returns nil after the
// whole synchronous read when the directories themselves changed (the root
// moved, a directory came or went): rare, and that read also watches them.
func (s *Source) beginWalk(watcher *fsnotify.Watcher, w *walked, changed func()) (*applying, error) {
	s.walks, s.seen = s.walks+1, 0
	if w.err != nil || w.root != s.root || !s.sameDirs(watcher, w) {
		s.spare = w
		return nil, s.read(watcher, true, nil, changed)
	}
	return &applying{w: w}, nil
}

// applyChunk compares the walk's next files with what was read, until
// walkChunk of them or the deadline; after the last it reads the paths
// found changed, as events naming them would: the walk's findings may be
// stale by now, and reread looks at each path again. It reports done
// after that read, and the walk's buffers are then the next walk's.
func (s *Source) applyChunk(watcher *fsnotify.Watcher, a *applying, deadline time.Time, changed func()) (done bool, err error) {
	if done, err = s.compare(watcher, a, deadline, changed); done {
		s.spare = a.w
	}
	return done, err
}

func (s *Source) compare(watcher *fsnotify.Watcher, a *applying, deadline time.Time, changed func()) (done bool, err error) {
	if a.w.root != s.root {
		return true, nil // a whole read ran meanwhile
	}
	files := a.w.list.files
	first := a.next
	for end := min(a.next+walkChunk, len(files)); a.next < end; a.next++ {
		if a.next > first && (a.next-first)%walkCheck == 0 && time.Now().After(deadline) {
			break
		}
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
func (s *Source) sameDirs(watcher *fsnotify.Watcher, w *walked) bool {
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
