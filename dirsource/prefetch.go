package dirsource

import (
	"path/filepath"
	"runtime"
	"time"

	"github.com/tlsplane/tlsplane/translator"
)

// read is one manifest file read and parsed ahead of the pass that
// applies it: what readPath would do to it before it touches the
// source's state.
type read struct {
	stamped  stamp
	stampOK  bool
	data     []byte
	err      error
	parsed   bool
	objs     translator.Inputs
	parseErr error
}

// readAhead reads and parses rels on every core, in order, at most
// window files ahead of the consumer: parsing (admitting Gateway API
// objects) is the cost of a directory's first read, and the source's
// state is applied one file at a time. next returns rel's read, or nil
// when rel is not the next one asked for; stop ends the workers.
//
// A file is parsed before the pass checks it against TotalBytes, so up to
// window files more than the limit allows may be held, parsed, for a
// moment: the bound on memory the limit keeps, give or take those.
func (s *Source) readAhead(root string, rels []string) (next func(rel string) *read, stop func()) {
	if len(rels) == 0 {
		return func(string) *read { return nil }, func() {}
	}
	workers := min(runtime.GOMAXPROCS(0), len(rels))
	window := 2 * workers
	results := make([]chan *read, len(rels))
	for i := range results {
		results[i] = make(chan *read, 1)
	}
	done := make(chan struct{})
	tokens := make(chan struct{}, window)
	jobs := make(chan int)
	go func() {
		defer close(jobs)
		for i := range rels {
			select {
			case tokens <- struct{}{}:
			case <-done:
				return
			}
			select {
			case jobs <- i:
			case <-done:
				return
			}
		}
	}()
	for range workers {
		go func() {
			for i := range jobs {
				results[i] <- s.readAndParse(root, rels[i])
			}
		}()
	}
	at := 0
	next = func(rel string) *read {
		if at >= len(rels) || rels[at] != rel {
			return nil
		}
		r := <-results[at]
		at++
		<-tokens
		return r
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			close(done)
		}
	}
	return next, stop
}

// readAndParse is readPath's reading of rel, without its state: stamped
// before the read, the content, its sum, its objects.
func (s *Source) readAndParse(root, rel string) *read {
	shown := filepath.Join(s.opts.Dir, rel)
	r := &read{}
	r.stamped, r.stampOK = stampOf(filepath.Join(root, rel), time.Now())
	r.data, r.err = s.opts.Limits.ReadFileIn(root, rel, shown)
	if r.err != nil {
		return r
	}
	r.objs, r.parseErr = s.opts.Parse(shown, r.data)
	r.parsed = true
	return r
}
