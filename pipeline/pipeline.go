package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
)

// Publisher serves a translation's resources; *snapshots.Publisher is one.
// changed is false when the result equals what is already served.
type Publisher interface {
	Publish(out translator.Output) (changed bool, err error)
}

// RefusingPublisher says which fleets its last Publish refused
// (*snapshots.Publisher does): their Gateways are not Programmed.
type RefusingPublisher interface {
	Refusals() []translator.FleetRefusal
}

// TranslateFunc is translator.Translate's signature, replaceable in tests.
type TranslateFunc func(translator.Inputs, translator.PreviousStatus, time.Time, translator.Options) translator.Output

// Options wire a pipeline. Source, Publisher and Sink are required.
type Options struct {
	Source     Source
	Publisher  Publisher
	Sink       StatusSink
	Translator translator.Options
	Logger     *slog.Logger
	Registerer prometheus.Registerer

	// Conditions add what the data plane observed to each translation's
	// statuses (handshakes.Tracker, backendcerts.Inventory), in order:
	// each is handed the statuses the one before returned.
	Conditions []Conditions

	// CRLFetcher, when set, fetches the revocation lists translations
	// want, and its lists join the source's inputs.
	CRLFetcher CRLFetcher

	// Translate defaults to a Translator of the pipeline's own, which
	// reuses what unchanged objects translated to (CA parses, clusters,
	// statuses) from one event to the next, and, with a ChangeSource,
	// translates only what the changed objects reach.
	Translate TranslateFunc
	// Now defaults to time.Now; it is the `now` given to Translate.
	Now func() time.Time
	// Quiet and MaxDelay default to the package constants.
	Quiet, MaxDelay time.Duration
}

// Pipeline translates and publishes whenever its source changes.
type Pipeline struct {
	opts    Options
	log     *slog.Logger
	metrics *metrics
	kick    chan struct{}

	// translator is the pipeline's own (Options.Translate unset): with a
	// ChangeSource, passes update it with changes instead of states.
	translator *translator.Translator

	// Owned by Run's goroutine.
	computed   translator.PreviousStatus
	caNotAfter map[string]time.Time
	rejections rejectionLog
	// whole asks the next pass to translate the source's whole view.
	whole bool
	// gatewayAPI is the last pass's Gateway API statuses; unreported says
	// the last pass's statuses wait to be reported, since unreportedSince.
	gatewayAPI      translator.GatewayAPIStatuses
	unreported      bool
	unreportedSince time.Time
}

// New checks opts and returns a pipeline; nothing runs until Run.
func New(opts Options) (*Pipeline, error) {
	if opts.Source == nil || opts.Publisher == nil || opts.Sink == nil {
		return nil, errors.New("pipeline: Source, Publisher and Sink are required")
	}
	var own *translator.Translator
	if opts.Translate == nil {
		own = translator.New()
		opts.Translate = own.Translate
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Quiet <= 0 {
		opts.Quiet = Quiet
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = MaxDelay
	}
	if opts.CRLFetcher != nil {
		opts.Source = withFetchedCRLs(opts.Source, opts.CRLFetcher)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Pipeline{
		translator: own,
		opts:       opts,
		log:        log,
		metrics:    newMetrics(opts.Registerer),
		kick:       make(chan struct{}, 1),
	}, nil
}

// Conditions add data-plane conditions to the translator's statuses, after
// the translation was published and before statuses are reported.
type Conditions interface {
	// Apply must treat statuses as read-only and return a new map when it
	// changes one; origins is the same translation's cluster → policies.
	Apply(statuses map[types.NamespacedName]gwv1.PolicyStatus, origins map[string][]types.NamespacedName,
		previous translator.PreviousStatus, controller gwv1.GatewayController, now time.Time) map[types.NamespacedName]gwv1.PolicyStatus
}

// XBackendConditions are Conditions that also add what the data plane
// observed to XBackends' status.parents; origins is the translation's
// cluster → XBackends (Output.XBackendOrigins).
type XBackendConditions interface {
	ApplyXBackends(statuses map[types.NamespacedName]gwxv1a1.BackendStatus, origins map[string][]types.NamespacedName,
		previous map[types.NamespacedName]gwxv1a1.BackendStatus, controller gwv1.GatewayController, now time.Time) map[types.NamespacedName]gwxv1a1.BackendStatus
}

// ClusterConditions are Conditions that also read the translation's
// clusters (the TLS each was emitted with: backendcerts compares the
// version a backend negotiated with the cluster's maximum), handed over
// before Apply; the slice is the translation's, read-only.
type ClusterConditions interface {
	SeeClusters(clusters []*clusterv3.Cluster)
}

// Changed schedules a pass even when no input changed, as when the data
// plane's observations flipped. Safe from any goroutine; never blocks.
func (p *Pipeline) Changed() { p.changed() }

// Resync is how often a pass runs with no change at all, so statuses that
// depend on the clock (a CA that expires soon) follow it; the translator
// reuses what did not change, so a pass costs little.
const Resync = time.Hour

// changed is the Source's callback: it never blocks, and many calls before
// the loop wakes up count as one.
func (p *Pipeline) changed() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Run runs the source, translates its first complete view at once, then
// every debounced burst of changes, until ctx ends. It returns the source's
// error if the source stops on its own.
func (p *Pipeline) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sourceDone := make(chan error, 1)
	go func() { sourceDone <- p.opts.Source.Run(ctx, p.changed) }()
	// The source honours ctx; returning before it has would leak it.
	waitSource := func() error {
		cancel()
		return <-sourceDone
	}

	select {
	case <-p.opts.Source.Synced():
	case err := <-sourceDone:
		return sourceStopped(err)
	case <-ctx.Done():
		return waitSource()
	}
	p.sync()

	h := holdoff{quiet: p.opts.Quiet, maxDelay: p.opts.MaxDelay}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	resync := time.NewTicker(Resync)
	defer resync.Stop()
	for {
		select {
		case <-ctx.Done():
			return waitSource()
		case <-resync.C:
			// A whole translation also lets the translator forget what
			// deleted objects left in its caches.
			p.whole = true
			p.changed()
		case err := <-sourceDone:
			return sourceStopped(err)
		case <-p.kick:
			if now := time.Now(); h.leading(now) {
				// A change that comes alone goes to Envoy at once.
				p.metrics.changeWait.Observe(time.Since(now).Seconds())
				p.pass()
				h.passed(time.Since(now))
			} else {
				h.changed(now)
			}
		case <-timer.C:
			now := time.Now()
			if h.take(now) {
				p.metrics.changeWait.Observe(now.Sub(h.first).Seconds())
				p.pass()
				h.passed(time.Since(now))
			}
			if p.unreported && !now.Before(p.statusDue(&h)) {
				p.report()
			}
		}
		// Wake for whichever comes first: the pending burst, the statuses.
		next, ok := h.due()
		if p.unreported && (!ok || p.statusDue(&h).Before(next)) {
			next, ok = p.statusDue(&h), true
		}
		timer.Stop()
		if ok {
			timer.Reset(time.Until(next))
		}
	}
}

// statusDue is when the statuses of the passes since the last report are
// reported: a quiet period after the last change, so a burst half applied
// never shows, or StatusMaxDelay after the first such pass, so a steady
// trickle of changes cannot hold them back for ever.
func (p *Pipeline) statusDue(h *holdoff) time.Time {
	at := h.seen.Add(p.opts.Quiet)
	if limit := p.unreportedSince.Add(StatusMaxDelay); limit.Before(at) {
		return limit
	}
	return at
}

// sourceStopped turns a source's early return into an error: a control
// plane whose source stopped would silently serve stale configuration.
func sourceStopped(err error) error {
	if err == nil {
		return errors.New("pipeline: source stopped")
	}
	return err
}
