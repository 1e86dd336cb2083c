package statuswriter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlsplane/tlsplane/pipeline"
)

// FieldManager names tlsplane's status writes in managedFields.
const FieldManager = "tlsplane"

// Options configure a Writer.
type Options struct {
	// Gateway writes BackendTLSPolicy status. Required.
	Gateway gwclient.Interface
	// Controller is the controllerName whose entries this writer owns.
	Controller gwv1.GatewayController
	// Cached returns the informer's copy of a policy, to compare against
	// before writing without a GET per policy per translation. When nil,
	// the writer reads the API server.
	Cached func(types.NamespacedName) (*gwv1.BackendTLSPolicy, bool)
	// Election, when set, lets only the Lease holder write. Its Client is
	// required then.
	Election *Election
	// Workers write concurrently; 0 means 2.
	Workers int
	// RateLimiter paces retries and writes per policy; nil means client-go's
	// default controller rate limiter (per-item exponential backoff and an
	// overall 10 qps, burst 100).
	RateLimiter workqueue.TypedRateLimiter[types.NamespacedName]
	Logger      *slog.Logger
	Registerer  prometheus.Registerer
}

// Election is the Lease that decides which replica writes status.
type Election struct {
	Client    kubernetes.Interface
	Namespace string
	Name      string
	// Identity is unique per replica: the Pod name, or host name + pid.
	Identity                                  string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Writer is a pipeline.StatusSink that writes to the API server.
type Writer struct {
	opts    Options
	log     *slog.Logger
	metrics *metrics

	mu      sync.Mutex
	desired map[types.NamespacedName]gwv1.PolicyStatus
	// queue exists only during a term of leadership; nil otherwise.
	queue workqueue.TypedRateLimitingInterface[types.NamespacedName]
}

var _ pipeline.StatusSink = (*Writer)(nil)

// New returns a writer; nothing is written until Run.
func New(opts Options) (*Writer, error) {
	if opts.Gateway == nil || opts.Controller == "" {
		return nil, errors.New("status writer: Gateway client and Controller are required")
	}
	if opts.Election != nil && (opts.Election.Client == nil || opts.Election.Name == "" || opts.Election.Namespace == "" || opts.Election.Identity == "") {
		return nil, fmt.Errorf("status writer: leader election needs a client, a Lease namespace/name and an identity, got %s/%s identity %q",
			opts.Election.Namespace, opts.Election.Name, opts.Election.Identity)
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.RateLimiter == nil {
		opts.RateLimiter = workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Writer{
		opts:    opts,
		log:     log.With("component", "statuswriter"),
		metrics: newMetrics(opts.Registerer),
		desired: map[types.NamespacedName]gwv1.PolicyStatus{},
	}, nil
}

// Report records the desired statuses and queues the policies whose entries
// differ from the cached live object. It never blocks on the API server.
func (w *Writer) Report(statuses map[types.NamespacedName]gwv1.PolicyStatus) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.desired = make(map[types.NamespacedName]gwv1.PolicyStatus, len(statuses))
	for nn, st := range statuses {
		w.desired[nn] = st
	}
	if w.queue == nil {
		return // not the leader: the desired statuses wait for a term
	}
	for nn, st := range statuses {
		if w.opts.Cached != nil {
			if live, ok := w.opts.Cached(nn); ok && !needsWrite(live.Status, st, w.opts.Controller) {
				continue
			}
		}
		w.queue.Add(nn)
	}
}

// Run writes statuses until ctx ends: at once without an election, else
// whenever this replica holds the Lease.
func (w *Writer) Run(ctx context.Context) error {
	if w.opts.Election == nil {
		w.lead(ctx)
		return nil
	}
	return w.campaign(ctx)
}

// IsLeader reports whether this replica currently writes status.
func (w *Writer) IsLeader() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.queue != nil
}

// lead runs the workers until ctx ends; every desired status is checked
// first, since the previous leader may have left some unwritten.
func (w *Writer) lead(ctx context.Context) {
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(w.opts.RateLimiter,
		workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "backendtlspolicy-status"})
	w.mu.Lock()
	w.queue = queue
	for nn := range w.desired {
		queue.Add(nn)
	}
	w.mu.Unlock()
	w.metrics.leader.Set(1)
	w.log.Info("writing BackendTLSPolicy status", "controller", w.opts.Controller)

	var wg sync.WaitGroup
	for range w.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w.next(ctx, queue) {
			}
		}()
	}
	<-ctx.Done()
	w.mu.Lock()
	w.queue = nil
	w.mu.Unlock()
	w.metrics.leader.Set(0)
	// What is still queued is dropped: a next term re-checks everything.
	queue.ShutDown()
	wg.Wait()
}

// next handles one queued policy; false when the worker should stop.
func (w *Writer) next(ctx context.Context, queue workqueue.TypedRateLimitingInterface[types.NamespacedName]) bool {
	nn, shutdown := queue.Get()
	if shutdown {
		return false
	}
	defer queue.Done(nn)
	if ctx.Err() != nil {
		return false // the term or the process ended: no write without the Lease
	}
	err := w.write(ctx, nn)
	switch {
	case err == nil:
		queue.Forget(nn)
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
		// Retrying cannot fix these; the next translation will try again.
		w.log.Error("status not written", "policy", nn, "error", err)
		w.metrics.writes.WithLabelValues("rejected").Inc()
		queue.Forget(nn)
	default:
		w.log.Warn("status write failed; retrying", "policy", nn, "error", err, "retries", queue.NumRequeues(nn))
		w.metrics.writes.WithLabelValues("error").Inc()
		queue.AddRateLimited(nn)
	}
	return true
}

// write makes the live policy's entries of our controller equal to the
// desired ones, re-reading and re-merging on conflict.
func (w *Writer) write(ctx context.Context, nn types.NamespacedName) error {
	w.mu.Lock()
	desired, ok := w.desired[nn]
	w.mu.Unlock()
	if !ok {
		return nil // the policy is gone from the inputs
	}
	client := w.opts.Gateway.GatewayV1().BackendTLSPolicies(nn.Namespace)
	first := true
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var live *gwv1.BackendTLSPolicy
		if cached, ok := w.cached(nn); ok && first {
			live = cached
		} else {
			// A conflict means our copy is stale: read the API server's.
			got, err := client.Get(ctx, nn.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			live = got
		}
		first = false
		if !needsWrite(live.Status, desired, w.opts.Controller) {
			w.metrics.writes.WithLabelValues("unchanged").Inc()
			return nil
		}
		updated := live.DeepCopy()
		updated.Status = merge(live.Status, desired, w.opts.Controller)
		_, err := client.UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: FieldManager})
		switch {
		case err == nil:
			w.metrics.writes.WithLabelValues("written").Inc()
			w.log.Debug("status written", "policy", nn)
		case apierrors.IsConflict(err):
			w.metrics.writes.WithLabelValues("conflict").Inc()
		case apierrors.IsNotFound(err):
			return nil
		}
		return err
	})
}

func (w *Writer) cached(nn types.NamespacedName) (*gwv1.BackendTLSPolicy, bool) {
	if w.opts.Cached == nil {
		return nil, false
	}
	return w.opts.Cached(nn)
}
