package dirsource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/pipeline"
	"github.com/tlsplane/tlsplane/translator"
)

// Parser turns one file's bytes into objects; path is only for messages.
type Parser func(path string, data []byte) (translator.Inputs, error)

// Options configure a directory source.
type Options struct {
	// Dir is the directory of manifests; it must exist when Run starts.
	Dir string
	// Parse parses one manifest file. Required; built with Limits
	// (Limits.Parser), so a file is bounded the same way everywhere. It
	// is called from several goroutines at once (a pass's files are
	// parsed on every core), so it and the warnings it gives must be
	// safe for that.
	Parse Parser
	// Limits bound each file read and the sum of the files whose objects
	// are served, and keep the files read inside Dir unless
	// FollowExternalLinks; zero fields are manifests.DefaultLimits'.
	Limits manifests.Limits
	// Logger receives one line per file error, recovery and removal.
	Logger *slog.Logger
	// Registerer, when set, receives the source's metrics.
	Registerer prometheus.Registerer
	// Resync re-reads the directory this often even without events;
	// zero means DefaultResync.
	Resync time.Duration
}

const (
	// DefaultResync bounds how stale the view can get if the kernel drops
	// watch events (inotify queue overflow, unwatchable file systems).
	DefaultResync = time.Minute
	// defaultSettle coalesces the burst of events one in-place save
	// produces into one re-read, and lets a writer finish the file. A file
	// renamed into place is complete already and read at once.
	defaultSettle = 50 * time.Millisecond
)

// Source reads and watches a directory. Use New; Run once.
type Source struct {
	opts    Options
	log     *slog.Logger
	metrics *metrics
	synced  chan struct{}
	view    *view

	// Owned by Run's goroutine.
	files map[string]*fileState // by path relative to root
	// countsDirty: a file's failing flag flipped, or a file went, since
	// the gauges were set for countedFiles files.
	countsDirty  bool
	countedFiles int
	holders      map[objectKey][]string // the paths defining each object
	held         int64                  // the bytes of the files whose objects are kept, bounded by Limits.TotalBytes
	links        map[string]bool        // the paths that are symlinks, read again by every read
	watched      map[string]bool        // directories added to the watcher
	root         string                 // opts.Dir through its symlinks, at the last walk
	suspect      []string               // paths to read again after settle
	settle       time.Duration          // defaultSettle; tests lengthen it
	walks        uint64                 // periodic walks compared so far; see fileState.seen
	seen         int                    // the files whose seen is walks
	spare        *walked                // the last walk's buffers, for the next
}

var _ pipeline.ChangeSource = (*Source)(nil)

// New returns a source over opts.Dir; nothing is read until Run.
func New(opts Options) (*Source, error) {
	if opts.Dir == "" {
		return nil, errors.New("directory source: no directory given")
	}
	if opts.Parse == nil {
		return nil, fmt.Errorf("directory source %s: no parser given", opts.Dir)
	}
	if opts.Resync <= 0 {
		opts.Resync = DefaultResync
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Source{
		opts:    opts,
		log:     log.With("source", "dir", "dir", opts.Dir),
		metrics: newMetrics(opts.Registerer),
		synced:  make(chan struct{}),
		view:    newView(),
		files:   map[string]*fileState{},
		holders: map[objectKey][]string{},
		links:   map[string]bool{},
		watched: map[string]bool{},
		settle:  defaultSettle,
	}
	return s, nil
}

// Synced is closed after the first read of the directory.
func (s *Source) Synced() <-chan struct{} { return s.synced }

// Inputs returns the objects served now, each kind in namespace and name
// order; never mutated afterwards. It is built when first asked for after
// a change, so a caller that follows Changes pays for it only on Resync.
func (s *Source) Inputs() translator.Inputs { return s.view.current() }

// Changes returns the objects whose served value changed since the last
// call (after duplicates are resolved), by kind, namespace and name; a
// deleted or no longer served object has a nil Object. The first call
// returns Resync.
func (s *Source) Changes() translator.Changes { return s.view.changes() }

// Run reads the directory, then re-reads the paths each burst of watch
// events names (and every symlinked manifest), and the whole directory
// every Resync or after lost events, calling changed when the objects
// changed. It returns nil when ctx ends, or an error when the directory
// cannot be watched.
func (s *Source) Run(ctx context.Context, changed func()) error {
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("directory source %s: watch: %w", s.opts.Dir, err)
	}
	defer watcher.Close()
	// Watch before the first read, so no change between the two is lost.
	if err := watcher.Add(s.opts.Dir); err != nil {
		return fmt.Errorf("directory source %s: watch: %w", s.opts.Dir, err)
	}
	_, again, err := s.rescan(watcher)
	if err != nil {
		return err
	}
	close(s.synced)

	resync := time.NewTicker(s.opts.Resync)
	defer resync.Stop()
	pending := time.NewTimer(s.settle)
	pending.Stop()
	armed := false
	arm := func() {
		if !armed {
			pending.Reset(s.settle)
			armed = true
		}
	}
	// named are the paths the events since the last read named; whole is
	// set when only a walk of the whole directory can tell what changed;
	// placed are the paths a rename just put in place, complete files
	// read at once (with the symlinked ones, as every read does) when
	// readNow. last is the event before, to recognise a rename.
	named, placed := map[string]bool{}, map[string]bool{}
	whole, readNow := false, false
	// The periodic walk runs on its own goroutine: an edit never waits
	// for it (45 ms at 10,000 files when it ran here).
	// Its findings are compared a turn at a time (step), between events.
	walks, walking := make(chan *walked, 1), false
	step := time.NewTimer(walkGap)
	step.Stop()
	var cur *applying
	var last fsnotify.Event
	if again {
		arm()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-watcher.Events:
			if !ok {
				return fmt.Errorf("directory source %s: watcher closed", s.opts.Dir)
			}
			// Take the events already waiting too: one read for them all.
			for more := true; more; {
				if s.note(ev, named) {
					whole = true
				}
				if rel, ok := s.renamedIntoPlace(last, ev); ok {
					readNow = true
					if rel != "" {
						placed[rel] = true
					}
				}
				last = ev
				select {
				case ev, more = <-watcher.Events:
				default:
					more = false
				}
			}
			if readNow && !whole {
				whole = s.read(watcher, false, slices.Collect(maps.Keys(placed)), changed) != nil
			}
			clear(placed)
			readNow = false
			arm()
		case werr, ok := <-watcher.Errors:
			if !ok {
				return fmt.Errorf("directory source %s: watcher closed", s.opts.Dir)
			}
			// Usually a queue overflow: events were lost, so read everything.
			s.log.Warn("watch error; re-reading the directory", "error", werr)
			whole = true
			arm()
		case <-resync.C:
			s.startWalk(&walking, walks)
		case w := <-walks:
			walking = false
			var err error
			if cur, err = s.beginWalk(watcher, w, changed); err != nil {
				whole = true
				arm()
			} else if cur != nil {
				step.Reset(walkGap)
			}
		case <-step.C:
			done, err := s.applyChunk(watcher, cur, time.Now().Add(walkTurn), changed)
			if !done {
				step.Reset(walkGap)
				continue
			}
			cur = nil
			if err != nil {
				whole = true
				arm()
			}
		case <-pending.C:
			armed = false
			for _, rel := range s.suspect {
				named[rel] = true // read again before believing it
			}
			err := s.read(watcher, whole, slices.Collect(maps.Keys(named)), changed)
			clear(named)
			whole = err != nil
			if len(s.suspect) > 0 {
				arm() // a suspect path: read it again before believing it
			}
		}
	}
}

// read reads the whole directory, or the paths named, and calls changed
// when what is served changed. An error means the directory itself is
// unreadable: what is served stays, and the next read must be whole.
func (s *Source) read(watcher *fsnotify.Watcher, whole bool, named []string, changed func()) error {
	start := time.Now()
	var did bool
	var err error
	if whole {
		did, _, err = s.rescan(watcher)
	} else {
		did, _, err = s.reread(watcher, named)
	}
	took := time.Since(start)
	s.metrics.reads.Observe(took.Seconds())
	s.log.Debug("directory read", "whole", whole, "paths", len(named), "changed", did, "duration", took)
	if err != nil {
		s.log.Error("directory unreadable; keeping the last good objects", "error", err)
		s.metrics.fileErrors.Inc()
		return err
	}
	if did {
		s.metrics.reloads.Inc()
		changed()
	}
	return nil
}
