package pipeline

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// changeSource is a fakeSource that also says what changed, and counts
// how often its whole view is read.
type changeSource struct {
	*fakeSource
	mu      sync.Mutex
	pending translator.Changes
	reads   int
}

func (s *changeSource) Inputs() translator.Inputs {
	s.mu.Lock()
	s.reads++
	s.mu.Unlock()
	return s.fakeSource.Inputs()
}

func (s *changeSource) Changes() translator.Changes {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.pending
	s.pending = translator.Changes{}
	return c
}

// outputs records what the pipeline publishes.
type outputs struct {
	mu  sync.Mutex
	all []translator.Output
}

func (o *outputs) Publish(out translator.Output) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.all = append(o.all, out)
	return true, nil
}
func (o *outputs) Report(map[types.NamespacedName]gwv1.PolicyStatus) {}

func (o *outputs) wait(t *testing.T, n int) translator.Output {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		o.mu.Lock()
		if len(o.all) >= n {
			out := o.all[n-1]
			o.mu.Unlock()
			return out
		}
		o.mu.Unlock()
	}
	t.Fatalf("fewer than %d publishes", n)
	return translator.Output{}
}

// TestPipelineTranslatesChanges: with a ChangeSource, the first pass reads
// the whole view; a later one updates the translator with the changes
// alone, without reading the whole view again.
func TestPipelineTranslatesChanges(t *testing.T) {
	svc := func(port int32) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pay"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: port}}}}
	}
	src := &changeSource{fakeSource: newFakeSource(), pending: translator.Changes{Resync: true}}
	src.set(translator.Inputs{Services: []*corev1.Service{svc(443)}})
	pub := &outputs{}
	p, err := New(Options{Source: src, Publisher: pub, Sink: pub, Quiet: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	changed := <-src.changed
	first := pub.wait(t, 1)
	if len(first.Clusters) != 1 || first.Clusters[0].Name != "shop/pay/443" || first.Changed != nil {
		t.Fatalf("first pass: clusters %v, Changed %v", first.Clusters, first.Changed)
	}

	src.set(translator.Inputs{Services: []*corev1.Service{svc(443), svc(8443)}}) // never read again
	src.mu.Lock()
	src.pending = translator.Changes{Objects: []translator.Change{{Kind: translator.KindService, Key: types.NamespacedName{Namespace: "shop", Name: "pay"}, Object: svc(8443)}}}
	src.mu.Unlock()
	changed()
	second := pub.wait(t, 2)
	if len(second.Clusters) != 1 || second.Clusters[0].Name != "shop/pay/8443" {
		t.Fatalf("second pass: clusters %v, want shop/pay/8443 alone", second.Clusters)
	}
	if second.Changed == nil || second.Changed.Since != first.Generation {
		t.Fatalf("second pass: Changed %+v, want changes since generation %d", second.Changed, first.Generation)
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	if src.reads != 1 {
		t.Errorf("the whole view was read %d times, want once (the first pass)", src.reads)
	}
}
