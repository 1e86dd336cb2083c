package pipeline

import (
	"context"
	"slices"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/input"
)

// CRLFetcher fetches the revocation lists translations want
// (crlfetch.Fetcher is one): the pipeline tells it each translation's
// Output.CRLDistributionPoints and adds its lists to the source's inputs.
type CRLFetcher interface {
	// Want is called after every translation; it must be cheap when the
	// points did not change.
	Want(points map[string][][]byte)
	// Run fetches until ctx ends, calling changed after a list changed.
	Run(ctx context.Context, changed func())
	// Lists are the current lists; Changes those changed since last asked.
	Lists() []*input.FetchedCRL
	Changes() []translator.Change
}

// withFetchedCRLs is src with f's lists among its inputs: a ChangeSource
// when src is one.
func withFetchedCRLs(src Source, f CRLFetcher) Source {
	s := crlSource{src: src, fetcher: f}
	if cs, ok := src.(ChangeSource); ok {
		return crlChangeSource{s, cs}
	}
	return s
}

type crlSource struct {
	src     Source
	fetcher CRLFetcher
}

// Run runs the fetcher beside the source; it stops with ctx, as the
// source does.
func (s crlSource) Run(ctx context.Context, changed func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); s.fetcher.Run(ctx, changed) }()
	defer func() { <-done }() // after cancel: the fetcher is gone when Run returns
	return s.src.Run(ctx, changed)
}

func (s crlSource) Synced() <-chan struct{} { return s.src.Synced() }

func (s crlSource) Inputs() translator.Inputs {
	in := s.src.Inputs() // a copy of the struct: its slices are shared, never mutated
	in.FetchedCRLs = s.fetcher.Lists()
	return in
}

type crlChangeSource struct {
	crlSource
	changes ChangeSource
}

// Changes are the source's, then the lists'.
func (s crlChangeSource) Changes() translator.Changes {
	c := s.changes.Changes()
	if lists := s.fetcher.Changes(); len(lists) > 0 && !c.Resync {
		c.Objects = append(slices.Clip(c.Objects), lists...)
	}
	return c
}
