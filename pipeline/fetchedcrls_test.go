package pipeline

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/input"
)

// fakeFetcher holds lists and records what it is asked to want.
type fakeFetcher struct {
	mu      sync.Mutex
	lists   []*input.FetchedCRL
	pending []translator.Change
	wanted  []map[string][][]byte
	ran     chan func()
}

func (f *fakeFetcher) Want(points map[string][][]byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wanted = append(f.wanted, points)
}
func (f *fakeFetcher) Run(ctx context.Context, changed func()) { f.ran <- changed; <-ctx.Done() }
func (f *fakeFetcher) Lists() []*input.FetchedCRL {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lists
}
func (f *fakeFetcher) Changes() []translator.Change {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.pending
	f.pending = nil
	return c
}

// The fetcher's lists join the source's inputs and changes (not a
// Resync's: the whole view has them), it runs beside the source, and each
// translation's distribution points are handed to it.
func TestFetchedCRLsJoinTheSource(t *testing.T) {
	list := &input.FetchedCRL{ObjectMeta: metav1.ObjectMeta{Name: "http://crl.example.com/ca.crl"}, DER: []byte{1}}
	change := translator.Change{Kind: translator.KindFetchedCRL, Key: types.NamespacedName{Name: list.Name}, Object: list}
	f := &fakeFetcher{lists: []*input.FetchedCRL{list}, ran: make(chan func(), 1)}
	src := &changeSource{fakeSource: newFakeSource(), pending: translator.Changes{Resync: true}}
	s := withFetchedCRLs(src, f).(ChangeSource)
	if in := s.Inputs(); len(in.FetchedCRLs) != 1 || in.FetchedCRLs[0] != list {
		t.Fatalf("Inputs().FetchedCRLs = %v, want the fetcher's list", in.FetchedCRLs)
	}
	f.pending = []translator.Change{change}
	if c := s.Changes(); !c.Resync || len(c.Objects) != 0 || len(f.pending) != 0 {
		t.Fatalf("a Resync's Changes = %+v (fetcher's left %v), want the Resync alone and the fetcher's drained", c, f.pending)
	}
	f.pending = []translator.Change{change}
	if c := s.Changes(); c.Resync || !reflect.DeepEqual(c.Objects, []translator.Change{change}) {
		t.Fatalf("Changes = %+v, want the fetcher's list", c)
	}

	points := map[string][][]byte{list.Name: {{2}}}
	var seen [][]*input.FetchedCRL
	var mu sync.Mutex
	translate := func(in translator.Inputs, _ translator.PreviousStatus, _ time.Time, _ translator.Options) translator.Output {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, in.FetchedCRLs)
		return translator.Output{CRLDistributionPoints: points}
	}
	pub := &outputs{}
	p, err := New(Options{Source: newFakeSource(), Publisher: pub, Sink: pub, Translate: translate, CRLFetcher: f})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	select {
	case <-f.ran:
	case <-time.After(5 * time.Second):
		t.Fatal("the fetcher was not run")
	}
	pub.wait(t, 1)
	f.mu.Lock()
	defer f.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || len(seen[0]) != 1 || seen[0][0] != list {
		t.Errorf("the translation read FetchedCRLs %v, want the fetcher's list", seen)
	}
	if len(f.wanted) == 0 || !reflect.DeepEqual(f.wanted[0], points) {
		t.Errorf("the fetcher was asked to want %v, want the translation's points", f.wanted)
	}
}
