package statuswriter

import (
	"context"
	"testing"
	"time"

	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
)

// Leading runs during the term (here: at once, without an election) and
// Run returns only after it did, once the term's context ended.
func TestLeadingRunsDuringTheTerm(t *testing.T) {
	started, stopped := make(chan struct{}), make(chan struct{})
	w, err := New(Options{Gateway: gwfake.NewSimpleClientset(), Controller: "tlsplane.io/controller",
		Leading: func(ctx context.Context) {
			close(started)
			<-ctx.Done()
			close(stopped)
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.Run(ctx); close(done) }()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("Leading not started with the term")
	}
	if !w.IsLeader() {
		t.Error("Leading runs, but the writer does not lead")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
	select {
	case <-stopped:
	default:
		t.Fatal("Run returned before Leading did")
	}
}
