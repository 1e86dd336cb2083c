package pipeline

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// fakeSource serves whatever Inputs the test sets and signals on demand.
type fakeSource struct {
	mu      sync.Mutex
	in      translator.Inputs
	synced  chan struct{}
	changed chan func()
	runErr  error
}

func newFakeSource() *fakeSource {
	return &fakeSource{synced: make(chan struct{}), changed: make(chan func(), 1)}
}

func (s *fakeSource) Run(ctx context.Context, changed func()) error {
	s.changed <- changed
	close(s.synced)
	if s.runErr != nil {
		return s.runErr
	}
	<-ctx.Done()
	return nil
}
func (s *fakeSource) Synced() <-chan struct{} { return s.synced }
func (s *fakeSource) Inputs() translator.Inputs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.in
}
func (s *fakeSource) set(in translator.Inputs) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.in = in
}

// recorder logs every call the pipeline makes, in order.
type recorder struct {
	mu         sync.Mutex
	events     []string
	previous   []translator.PreviousStatus
	publishErr error
	panicMsg   string
}

func (r *recorder) add(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

func (r *recorder) translate(in translator.Inputs, prev translator.PreviousStatus, now time.Time, _ translator.Options) translator.Output {
	r.mu.Lock()
	r.previous = append(r.previous, prev)
	msg := r.panicMsg
	r.mu.Unlock()
	if msg != "" {
		panic(msg)
	}
	r.add("translate")
	out := translator.Output{Statuses: map[types.NamespacedName]gwv1.PolicyStatus{}}
	for _, p := range in.Policies {
		out.Statuses[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = acceptedStatus(now)
	}
	return out
}

func (r *recorder) Publish(translator.Output) (bool, error) {
	r.mu.Lock()
	err := r.publishErr
	r.mu.Unlock()
	if err != nil {
		r.add("publish-error")
		return false, err
	}
	r.add("publish")
	return true, nil
}

func (r *recorder) Report(map[types.NamespacedName]gwv1.PolicyStatus) { r.add("report") }

func acceptedStatus(now time.Time) gwv1.PolicyStatus {
	ns := gwv1.Namespace("shop")
	return gwv1.PolicyStatus{Ancestors: []gwv1.PolicyAncestorStatus{{
		AncestorRef:    gwv1.ParentReference{Kind: ptr(gwv1.Kind("Service")), Namespace: &ns, Name: "payments"},
		ControllerName: translator.DefaultControllerName,
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted",
			LastTransitionTime: metav1.NewTime(now)}},
	}}}
}

func ptr[T any](v T) *T { return &v }

func policy(name string, status gwv1.PolicyStatus) *gwv1.BackendTLSPolicy {
	p := &gwv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}
	p.Status = status
	return p
}

// startPipeline runs a pipeline with short debounce timings until the test ends.
func startPipeline(t *testing.T, src *fakeSource, rec *recorder) (changed func(), result *runResult) {
	t.Helper()
	return startPipelineTimed(t, src, rec, 30*time.Millisecond, 300*time.Millisecond)
}

func startPipelineTimed(t *testing.T, src *fakeSource, rec *recorder, quiet, maxDelay time.Duration) (changed func(), result *runResult) {
	t.Helper()
	p, err := New(Options{Source: src, Publisher: rec, Sink: rec, Translate: rec.translate,
		Quiet: quiet, MaxDelay: maxDelay})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	result = &runResult{done: make(chan struct{})}
	go func() { result.err = p.Run(ctx); close(result.done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-result.done:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return within 5s of cancel")
		}
	})
	select {
	case changed = <-src.changed:
	case <-time.After(5 * time.Second):
		t.Fatal("source not started within 5s")
	}
	return changed, result
}

// runResult is Run's return, readable any number of times once done closes.
type runResult struct {
	done chan struct{}
	err  error
}

// waitEvents waits (at most 5s) until the recorder holds want events.
func waitEvents(t *testing.T, rec *recorder, want int) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if ev := rec.snapshot(); len(ev) >= want {
			return ev
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("events = %v, want %d of them", rec.snapshot(), want)
	return nil
}

func TestPipelineFirstSyncPublishesThenReports(t *testing.T) {
	src, rec := newFakeSource(), &recorder{}
	src.set(translator.Inputs{Policies: []*gwv1.BackendTLSPolicy{policy("payments", gwv1.PolicyStatus{})}})
	startPipeline(t, src, rec)
	got := waitEvents(t, rec, 3)
	want := []string{"translate", "publish", "report"}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("events = %v, want %v", got, want)
	}
}

// TestPipelineCoalescesABurst: the first change of a burst is published at
// once (the leading pass, its statuses held), the other nine together
// after the quiet period, with one report for the whole burst: two passes,
// never a status of the half-applied burst.
func TestPipelineCoalescesABurst(t *testing.T) {
	src, rec := newFakeSource(), &recorder{}
	// A quiet period far above the gaps of the burst, so a loaded machine
	// stretching a 5 ms sleep does not split it (the timing rules themselves
	// are TestHoldoff's, on a fake clock).
	const quiet = 300 * time.Millisecond
	changed, _ := startPipelineTimed(t, src, rec, quiet, 10*quiet)
	waitEvents(t, rec, 3)
	for range 10 {
		changed()
		time.Sleep(5 * time.Millisecond)
	}
	waitEvents(t, rec, 8)
	time.Sleep(3 * quiet) // several quiet periods: no late third pass
	got := rec.snapshot()[3:]
	want := []string{"translate", "publish", "translate", "publish", "report"}
	if len(got) != len(want) {
		t.Fatalf("a burst of 10 changes gave events %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("a burst of 10 changes gave events %v, want %v", got, want)
		}
	}
}

// TestPipelinePublishesALoneChangeAtOnce: a change after a quiet spell is
// published without waiting for the quiet period; its statuses are
// reported once the quiet period passed with no other change.
func TestPipelinePublishesALoneChangeAtOnce(t *testing.T) {
	src, rec := newFakeSource(), &recorder{}
	const quiet = 300 * time.Millisecond
	changed, _ := startPipelineTimed(t, src, rec, quiet, 10*quiet)
	waitEvents(t, rec, 3)
	time.Sleep(quiet + 50*time.Millisecond) // a quiet spell after the first sync
	start := time.Now()
	changed()
	waitEvents(t, rec, 5)
	if took := time.Since(start); took >= quiet {
		t.Fatalf("a lone change was published after %v, want well under the quiet period %v", took, quiet)
	}
	if got := rec.snapshot(); len(got) != 5 {
		t.Fatalf("events right after the publish = %v: statuses must wait for the quiet period", got)
	}
	got := waitEvents(t, rec, 6)
	if got[5] != "report" {
		t.Fatalf("events = %v, want the held report after the quiet period", got)
	}
	if took := time.Since(start); took < quiet {
		t.Fatalf("the report came %v after the change, before the quiet period %v", took, quiet)
	}
}

// TestPipelineTrickle: changes 20 ms apart for 1.5 s never leave a quiet
// period; they are published every MaxDelay, and their statuses reported
// once StatusMaxDelay passed, not held for as long as the trickle lasts.
func TestPipelineTrickle(t *testing.T) {
	// A loaded machine can stall the trickle for longer than the quiet
	// period, which rightly reports early: such a run proves nothing, and
	// is run again (at most three times).
	for attempt := 1; ; attempt++ {
		stalled := trickle(t)
		if !stalled {
			return
		}
		if attempt == 3 {
			t.Fatalf("the trickle stalled for longer than the quiet period in %d runs: the machine is too loaded to tell", attempt)
		}
		t.Logf("run %d: the trickle stalled for longer than the quiet period; running again", attempt)
	}
}

// trickle runs one trickle and checks it; stalled says a gap between two
// changes exceeded the quiet period before the statuses were reported.
func trickle(t *testing.T) (stalled bool) {
	src, rec := newFakeSource(), &recorder{}
	const quiet, maxDelay = 100 * time.Millisecond, 50 * time.Millisecond
	changed, _ := startPipelineTimed(t, src, rec, quiet, maxDelay)
	waitEvents(t, rec, 3)
	time.Sleep(2 * quiet)
	start := time.Now()
	var reportedAt time.Duration
	last := start
	for time.Since(start) < 1500*time.Millisecond {
		changed()
		if gap := time.Since(last); reportedAt == 0 && gap >= quiet {
			stalled = true
		}
		last = time.Now()
		time.Sleep(20 * time.Millisecond)
		if got := rec.snapshot(); reportedAt == 0 && slices.Contains(got[3:], "report") {
			reportedAt = time.Since(start)
		}
	}
	if stalled && reportedAt < StatusMaxDelay {
		return true
	}
	got := rec.snapshot()[3:]
	if n := strings.Count(strings.Join(got, " "), "publish"); n < 10 {
		t.Errorf("%d publishes in a 1.5 s trickle with a %v cap, want at least 10: %v", n, maxDelay, got)
	}
	if reportedAt == 0 || reportedAt < StatusMaxDelay || reportedAt > StatusMaxDelay+500*time.Millisecond {
		t.Errorf("statuses first reported %v into the trickle, want about StatusMaxDelay (%v) after its first pass", reportedAt, StatusMaxDelay)
	}
	return false
}

func TestPipelinePublishErrorReportsNoStatus(t *testing.T) {
	src, rec := newFakeSource(), &recorder{publishErr: errors.New("inconsistent snapshot")}
	changed, _ := startPipeline(t, src, rec)
	waitEvents(t, rec, 2)
	rec.mu.Lock()
	rec.publishErr = nil
	rec.mu.Unlock()
	changed()
	got := waitEvents(t, rec, 5)
	want := []string{"translate", "publish-error", "translate", "publish", "report"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events = %v, want %v", got, want)
		}
	}
}

func TestPipelineSurvivesATranslatorPanic(t *testing.T) {
	src, rec := newFakeSource(), &recorder{panicMsg: "boom"}
	changed, _ := startPipeline(t, src, rec)
	time.Sleep(50 * time.Millisecond)
	if got := rec.snapshot(); len(got) != 0 {
		t.Fatalf("after a panic: events %v, want none (nothing published)", got)
	}
	rec.mu.Lock()
	rec.panicMsg = ""
	rec.mu.Unlock()
	changed()
	waitEvents(t, rec, 3)
}

func TestPipelinePreviousStatus(t *testing.T) {
	src, rec := newFakeSource(), &recorder{}
	own := acceptedStatus(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	src.set(translator.Inputs{Policies: []*gwv1.BackendTLSPolicy{
		policy("carries-status", own),
		policy("bare", gwv1.PolicyStatus{}),
	}})
	changed, _ := startPipeline(t, src, rec)
	waitEvents(t, rec, 3)
	changed()
	waitEvents(t, rec, 6)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	first, second := rec.previous[0], rec.previous[1]
	carries := types.NamespacedName{Namespace: "shop", Name: "carries-status"}
	bare := types.NamespacedName{Namespace: "shop", Name: "bare"}
	if _, ok := first[bare]; ok {
		t.Errorf("first pass: previous status for %s, which has none", bare)
	}
	for i, prev := range []translator.PreviousStatus{first, second} {
		if got := prev[carries].Ancestors[0].Conditions[0].LastTransitionTime.Year(); got != 2020 {
			t.Errorf("pass %d: previous of %s is not its own .status (year %d)", i+1, carries, got)
		}
	}
	if _, ok := second[bare]; !ok {
		t.Errorf("second pass: previous status of %s is not what was computed", bare)
	}
}

func TestPipelineReturnsWhenTheSourceStops(t *testing.T) {
	src, rec := newFakeSource(), &recorder{}
	src.runErr = errors.New("watch lost")
	_, done := startPipeline(t, src, rec)
	select {
	case <-done.done:
		if done.err == nil || done.err.Error() != "watch lost" {
			t.Fatalf("Run = %v, want the source's error", done.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the source stopped")
	}
}
