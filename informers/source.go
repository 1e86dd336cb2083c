package informers

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlsplane/tlsplane/pipeline"
	"github.com/tlsplane/tlsplane/translator"
)

// Options configure the Kubernetes source.
type Options struct {
	// Client reads Services, EndpointSlices, ConfigMaps and Secrets.
	Client kubernetes.Interface
	// Gateway reads BackendTLSPolicies.
	Gateway gwclient.Interface
	// Namespaces restricts what is watched; empty means all namespaces.
	Namespaces []string
	// Logger receives watch errors and sync progress.
	Logger *slog.Logger
	// Registerer, when set, receives the source's metrics.
	Registerer prometheus.Registerer
}

// Source watches the API server through shared informers. Use New; Run once.
type Source struct {
	log     *slog.Logger
	metrics *metrics
	view    *view
	synced  chan struct{}

	// mu serialises event handlers, so changed is never called concurrently
	// and refs is rebuilt and read in order.
	mu      sync.Mutex
	refs    refs
	changed func() // nil until synced: the first translation follows Synced
}

var _ pipeline.Source = (*Source)(nil)

// New builds the informers; nothing is listed or watched until Run.
func New(opts Options) (*Source, error) {
	if opts.Client == nil || opts.Gateway == nil {
		return nil, errors.New("kubernetes source: Client and Gateway are required")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Source{
		log:     log.With("source", "kubernetes"),
		metrics: newMetrics(opts.Registerer),
		synced:  make(chan struct{}),
	}
	v, err := newView(opts.Client, opts.Gateway, opts.Namespaces, s)
	if err != nil {
		return nil, err
	}
	s.view = v
	return s, nil
}

// Run starts the informers, closes Synced once every one of them (and its
// event handler) has seen the initial list, and watches until ctx ends.
func (s *Source) Run(ctx context.Context, changed func()) error {
	s.view.start(ctx)
	defer s.view.shutdown()
	s.log.Info("waiting for informers to sync", "namespaces", s.view.namespacesForLog())
	if !cache.WaitForCacheSync(ctx.Done(), s.view.hasSynced...) {
		return nil // ctx ended first
	}
	s.mu.Lock()
	s.refs = refsOf(s.view.policies())
	s.changed = changed
	s.mu.Unlock()
	close(s.synced)
	s.log.Info("informers synced")
	<-ctx.Done()
	return nil
}

// Synced is closed once the first complete view is in the caches.
func (s *Source) Synced() <-chan struct{} { return s.synced }

// Inputs returns every policy, Service and EndpointSlice, and the
// ConfigMaps and Secrets that some policy refers to. The objects are the
// informers' cached ones: read-only, like everything in translator.Inputs.
func (s *Source) Inputs() translator.Inputs {
	policies := s.view.policies()
	r := refsOf(policies)
	return translator.Inputs{
		Policies:       policies,
		Services:       s.view.services(),
		EndpointSlices: s.view.endpointSlices(),
		ConfigMaps:     s.view.configMaps(r.configMaps),
		Secrets:        s.view.secrets(r.secrets),
	}
}

// Policy returns the cached BackendTLSPolicy namespace/name, for the status
// writer's compare before writing.
func (s *Source) Policy(nn types.NamespacedName) (*gwv1.BackendTLSPolicy, bool) {
	sc := s.view.scopeOf(nn.Namespace)
	if sc == nil {
		return nil, false
	}
	p, err := sc.policies.BackendTLSPolicies(nn.Namespace).Get(nn.Name)
	return p, err == nil
}
