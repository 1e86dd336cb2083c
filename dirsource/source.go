package dirsource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlsplane/tlsplane/pipeline"
	"github.com/tlsplane/tlsplane/translator"
)

// Parser turns one file's bytes into objects; path is only for messages.
type Parser func(path string, data []byte) (translator.Inputs, error)

// Options configure a directory source.
type Options struct {
	// Dir is the directory of manifests; it must exist when Run starts.
	Dir string
	// Parse parses one manifest file. Required.
	Parse Parser
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
	// settle coalesces the burst of events one save or one ConfigMap
	// swap produces into one re-read, and lets a writer finish the file.
	settle = 50 * time.Millisecond
)

// Source reads and watches a directory. Use New; Run once.
type Source struct {
	opts    Options
	log     *slog.Logger
	metrics *metrics
	synced  chan struct{}
	current atomic.Pointer[translator.Inputs]
	files   map[string]*fileState // owned by Run's goroutine
	watched map[string]bool       // directories added to the watcher
}

var _ pipeline.Source = (*Source)(nil)

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
		files:   map[string]*fileState{},
		watched: map[string]bool{},
	}
	s.current.Store(&translator.Inputs{})
	return s, nil
}

// Synced is closed after the first read of the directory.
func (s *Source) Synced() <-chan struct{} { return s.synced }

// Inputs returns the objects of the last read; never mutated afterwards.
func (s *Source) Inputs() translator.Inputs { return *s.current.Load() }

// Run reads the directory, then re-reads it on every watch event and every
// Resync, calling changed when the objects changed. It returns nil when ctx
// ends, or an error when the directory cannot be watched.
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
	pending := time.NewTimer(settle)
	pending.Stop()
	armed := false
	arm := func() {
		if !armed {
			pending.Reset(settle)
			armed = true
		}
	}
	if again {
		arm()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-watcher.Events:
			if !ok {
				return fmt.Errorf("directory source %s: watcher closed", s.opts.Dir)
			}
			arm()
		case werr, ok := <-watcher.Errors:
			if !ok {
				return fmt.Errorf("directory source %s: watcher closed", s.opts.Dir)
			}
			// Usually a queue overflow: events were lost, so read everything.
			s.log.Warn("watch error; re-reading the directory", "error", werr)
			arm()
		case <-resync.C:
			arm()
		case <-pending.C:
			armed = false
			start := time.Now()
			did, again, err := s.rescan(watcher)
			s.log.Debug("directory read", "changed", did, "duration", time.Since(start))
			if err != nil {
				// The directory itself is unreadable: keep serving what we have.
				s.log.Error("directory unreadable; keeping the last good objects", "error", err)
				s.metrics.fileErrors.Inc()
				continue
			}
			if again {
				arm() // a suspect path: read it again before believing it
			}
			if did {
				s.metrics.reloads.Inc()
				changed()
			}
		}
	}
}
