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
	"github.com/tlsplane/tlsplane/translator"
)

// FieldManager names tlsplane's status writes in managedFields.
const FieldManager = "tlsplane"

// Options configure a Writer.
type Options struct {
	// Gateway writes the Gateway API statuses. Required.
	Gateway gwclient.Interface
	// Controller is the controllerName whose entries this writer owns.
	Controller gwv1.GatewayController
	// Cache holds the informers' copies, to compare against before writing
	// without a GET per object per translation. When nil, the writer reads
	// the API server. When it is also a LiveChanges, the writer restores
	// statuses of ours that someone else overwrote.
	Cache Cache
	// Election, when set, lets only the Lease holder write. Its Client is
	// required then.
	Election *Election
	// Workers write concurrently; 0 means 8. One write waits for the API
	// server (a few milliseconds, far more under load): with 2, a first
	// sync of 1,000 policies wrote ~300 statuses a second against a local
	// API server, and fell behind a burst of creates that 8 kept up with.
	// The client's rate limit (--kube-api-qps) bounds them together.
	Workers int
	// RateLimiter paces retries and writes per object; nil means client-go's
	// default controller rate limiter (per-item exponential backoff and an
	// overall 10 qps, burst 100).
	RateLimiter workqueue.TypedRateLimiter[Object]
	// Leading, when set, runs beside the writes during each term (at once
	// without an election) and must return when its ctx, the term's, ends:
	// other writes that only the leader makes (the Gateway provisioner).
	Leading    func(ctx context.Context)
	Logger     *slog.Logger
	Registerer prometheus.Registerer
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

	mu sync.Mutex
	// desired is the last reported policy statuses, the pipeline's map
	// itself (read-only): the next report is compared with it.
	desired map[types.NamespacedName]gwv1.PolicyStatus
	// gatewayAPI is the latest Gateway API statuses; cleared are
	// routes we wrote parents on that no longer name a Gateway of ours,
	// and XBackends no route of our Gateways reaches any more, whose
	// entries of ours are to be removed.
	gatewayAPI translator.GatewayAPIStatuses
	cleared    map[Object]bool
	// recheck are objects to compare with the cache after the next
	// report: created or edited (the translation they cause may change no
	// status), or whose write was refused.
	recheck map[Object]bool
	// queue exists only during a term of leadership; nil otherwise.
	queue workqueue.TypedRateLimitingInterface[Object]
}

var _ pipeline.GatewayAPISink = (*Writer)(nil)

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
		opts.Workers = 8
	}
	if opts.RateLimiter == nil {
		opts.RateLimiter = workqueue.DefaultTypedControllerRateLimiter[Object]()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Writer{
		opts:    opts,
		log:     log.With("component", "statuswriter"),
		metrics: newMetrics(opts.Registerer),
		cleared: map[Object]bool{},
		recheck: map[Object]bool{},
	}
	if live, ok := opts.Cache.(LiveChanges); ok {
		live.NotifyStatusChanges(w.liveChanged)
	}
	return w, nil
}

// Report records the desired statuses and queues the policies whose status
// changed since the last report and whose entries differ from the cached
// live object. It never blocks on the API server.
func (w *Writer) Report(statuses map[types.NamespacedName]gwv1.PolicyStatus) {
	w.mu.Lock()
	defer w.mu.Unlock()
	prev := w.desired
	w.desired = statuses
	if w.queue == nil {
		return // not the leader: the desired statuses wait for a term
	}
	diffStatuses(prev, statuses, func(nn types.NamespacedName) { w.queueIfDiffers(Object{KindBackendTLSPolicy, nn}) }, nil)
	w.recheckReported(false)
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
		workqueue.TypedRateLimitingQueueConfig[Object]{Name: "status"})
	w.mu.Lock()
	w.queue = queue
	clear(w.recheck) // everything is checked now
	for nn := range w.desired {
		queue.Add(Object{KindBackendTLSPolicy, nn})
	}
	for _, o := range w.gatewayAPIObjects() {
		queue.Add(o)
	}
	w.mu.Unlock()
	w.metrics.leader.Set(1)
	w.log.Info("writing status", "controller", w.opts.Controller)

	var wg sync.WaitGroup
	if w.opts.Leading != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.opts.Leading(ctx)
		}()
	}
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

// next handles one queued object; false when the worker should stop.
func (w *Writer) next(ctx context.Context, queue workqueue.TypedRateLimitingInterface[Object]) bool {
	o, shutdown := queue.Get()
	if shutdown {
		return false
	}
	defer queue.Done(o)
	if ctx.Err() != nil {
		return false // the term or the process ended: no write without the Lease
	}
	err := w.write(ctx, o)
	switch {
	case err == nil:
		queue.Forget(o)
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
		// Retrying cannot fix these; the next report will try again.
		w.log.Error("status not written", "object", o.String(), "error", err)
		w.metrics.writes.WithLabelValues(string(o.Kind), "rejected").Inc()
		queue.Forget(o)
		w.mu.Lock()
		w.recheck[o] = true
		w.mu.Unlock()
	default:
		w.log.Warn("status write failed; retrying", "object", o.String(), "error", err, "retries", queue.NumRequeues(o))
		w.metrics.writes.WithLabelValues(string(o.Kind), "error").Inc()
		queue.AddRateLimited(o)
	}
	return true
}

// write makes the live object's status (our part of it) equal to the
// desired one.
func (w *Writer) write(ctx context.Context, o Object) error {
	switch o.Kind {
	case KindBackendTLSPolicy:
		return w.writePolicy(ctx, o)
	case KindGatewayClass:
		return w.writeGatewayClass(ctx, o)
	case KindGateway:
		return w.writeGateway(ctx, o)
	case KindListenerSet:
		return w.writeListenerSet(ctx, o)
	case KindXBackend:
		return w.writeXBackend(ctx, o)
	case KindXBackendTrafficPolicy:
		return w.writeXBackendTrafficPolicy(ctx, o)
	case KindXMesh:
		return w.writeXMesh(ctx, o)
	}
	if rk, ok := translator.RouteKindOf(translator.Kind(o.Kind)); ok {
		return writeRoute(ctx, w, o, rk)
	}
	return fmt.Errorf("status writer: unknown kind of %s", o)
}

// writePolicy makes the live policy's entries of our controller equal to
// the desired ones.
func (w *Writer) writePolicy(ctx context.Context, o Object) error {
	w.mu.Lock()
	desired, ok := w.desired[o.NamespacedName]
	w.mu.Unlock()
	if !ok {
		return nil // the policy is gone from the inputs
	}
	client := w.opts.Gateway.GatewayV1().BackendTLSPolicies(o.Namespace)
	return writeStatus(ctx, w, o, statusOps[*gwv1.BackendTLSPolicy]{
		cached: func() (*gwv1.BackendTLSPolicy, bool) {
			if w.opts.Cache == nil {
				return nil, false
			}
			return w.opts.Cache.Policy(o.NamespacedName)
		},
		get: func(ctx context.Context) (*gwv1.BackendTLSPolicy, error) {
			return client.Get(ctx, o.Name, metav1.GetOptions{})
		},
		merged: func(live *gwv1.BackendTLSPolicy) *gwv1.BackendTLSPolicy {
			if !needsWrite(live.Status, desired, w.opts.Controller) {
				return nil
			}
			updated := live.DeepCopy()
			updated.Status = merge(live.Status, desired, w.opts.Controller)
			return updated
		},
		update: func(ctx context.Context, obj *gwv1.BackendTLSPolicy) error {
			_, err := client.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
			return err
		},
	})
}

// statusOps are one kind's steps of writeStatus.
type statusOps[T any] struct {
	cached func() (T, bool)
	get    func(context.Context) (T, error)
	// merged is live with the desired status, or the zero T (nil) when
	// live's is already as desired.
	merged func(live T) T
	update func(context.Context, T) error
}

// writeStatus compares the cached object's status with the desired one
// and writes the merge when they differ, re-reading the API server's copy
// and re-merging on conflict.
func writeStatus[T interface{ comparable }](ctx context.Context, w *Writer, o Object, ops statusOps[T]) error {
	var zero T
	first := true
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var live T
		if cached, ok := ops.cached(); ok && first {
			live = cached
		} else {
			// A conflict means our copy is stale: read the API server's.
			got, err := ops.get(ctx)
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			live = got
		}
		first = false
		updated := ops.merged(live)
		if updated == zero {
			w.metrics.writes.WithLabelValues(string(o.Kind), "unchanged").Inc()
			return nil
		}
		err := ops.update(ctx, updated)
		switch {
		case err == nil:
			w.metrics.writes.WithLabelValues(string(o.Kind), "written").Inc()
			w.log.Debug("status written", "object", o.String())
		case apierrors.IsConflict(err):
			w.metrics.writes.WithLabelValues(string(o.Kind), "conflict").Inc()
		case apierrors.IsNotFound(err):
			return nil
		}
		return err
	})
}
