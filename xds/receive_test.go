package xds

import (
	"errors"
	"io"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeReads is a stream's reads, one request or error at a time.
type fakeReads chan any

func (f fakeReads) recv() (string, error) {
	v := <-f
	if err, ok := v.(error); ok {
		return "", err
	}
	return v.(string), nil
}

func TestReceiverAppliesRequestsUntilTheEnd(t *testing.T) {
	refused := errors.New("refused")
	watch := make(chan struct{})
	for _, tc := range []struct {
		name    string
		reads   []any
		refuse  string // apply fails on this request
		applied []string
		ended   error
	}{
		{name: "requests then EOF", reads: []any{"cds", "eds", io.EOF}, applied: []string{"cds", "eds"}, ended: io.EOF},
		{name: "a read error", reads: []any{"cds", errors.New("reset")}, applied: []string{"cds"}},
		{name: "a refused request ends it", reads: []any{"cds", "bad", "eds"}, refuse: "bad", applied: []string{"cds", "bad"}, ended: refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reads := make(fakeReads, len(tc.reads))
			for _, v := range tc.reads {
				reads <- v
			}
			var mu sync.Mutex
			var applied []string
			r := receive(reads.recv, func(req string) (<-chan struct{}, error) {
				mu.Lock()
				defer mu.Unlock()
				applied = append(applied, req)
				if req == tc.refuse {
					return nil, refused
				}
				if len(applied) == 1 {
					return watch, nil
				}
				return nil, nil
			})
			var ended error
			select {
			case ended = <-r.ended:
			case <-time.After(5 * time.Second):
				t.Fatal("the stream did not end")
			}
			if tc.ended != nil && !errors.Is(ended, tc.ended) {
				t.Errorf("ended with %v, want %v", ended, tc.ended)
			}
			if ended == nil {
				t.Error("ended with nil")
			}
			select {
			case w := <-r.watching:
				if w != watch {
					t.Error("watching carried another channel than the first request's")
				}
			default:
				t.Error("watching carried nothing after the first request")
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(applied, tc.applied) {
				t.Errorf("applied %q, want %q", applied, tc.applied)
			}
		})
	}
}

// After close, a request read is not applied, and locked runs nothing:
// the handler may have returned.
func TestReceiverAppliesNothingAfterClose(t *testing.T) {
	reads := make(fakeReads)
	applied := make(chan string, 2)
	r := receive(reads.recv, func(req string) (<-chan struct{}, error) {
		applied <- req
		return nil, nil
	})
	reads <- "cds"
	if got := <-applied; got != "cds" {
		t.Fatalf("applied %q, want cds", got)
	}
	r.close()
	reads <- "eds" // read, then dropped: the goroutine ends on seeing it closed
	select {
	case got := <-applied:
		t.Errorf("applied %q after close", got)
	case <-time.After(100 * time.Millisecond):
	}
	ran := false
	if err := r.locked(func() error { ran = true; return nil }); err != nil || ran {
		t.Errorf("locked after close: ran=%v, %v", ran, err)
	}
}

// An error from the loop's turn closes the receiver too.
func TestReceiverLockedErrorCloses(t *testing.T) {
	reads := make(fakeReads)
	r := receive(reads.recv, func(string) (<-chan struct{}, error) { return nil, nil })
	failed := errors.New("send failed")
	if err := r.locked(func() error { return failed }); !errors.Is(err, failed) {
		t.Fatalf("locked = %v, want %v", err, failed)
	}
	ran := false
	r.locked(func() error { ran = true; return nil })
	if ran {
		t.Error("locked ran after an error closed the receiver")
	}
	reads <- io.EOF // ends the goroutine
}
