package informers

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlsplane/tlsplane/pipeline"
	"github.com/tlsplane/tlsplane/translator"
)

// Options configure the Kubernetes source.
type Options struct {
	// Client reads Services, EndpointSlices, ConfigMaps, Secrets and
	// Namespaces.
	Client kubernetes.Interface
	// Gateway reads the Gateway API kinds.
	Gateway gwclient.Interface
	// Discovery tells which Gateway API kinds are served; default
	// Client.Discovery().
	Discovery discovery.DiscoveryInterface
	// Namespaces restricts what is watched; empty means all namespaces.
	// GatewayClasses and Namespaces, cluster-scoped, are read regardless.
	Namespaces []string
	// Logger receives watch errors and sync progress.
	Logger *slog.Logger
	// Registerer, when set, receives the source's metrics.
	Registerer prometheus.Registerer
}

// Source watches the API server through shared informers. Use New; Run once.
type Source struct {
	log        *slog.Logger
	metrics    *metrics
	client     kubernetes.Interface
	gateway    gwclient.Interface
	discovery  discovery.DiscoveryInterface
	namespaces []string
	synced     chan struct{}

	// view is set by Run once discovery has answered which kinds to watch;
	// nil before.
	view atomic.Pointer[view]

	// mu serialises event handlers, so changed is never called concurrently
	// and refs is rebuilt and read in order.
	mu      sync.Mutex
	refs    refs
	changed func() // nil until synced: the first translation follows Synced
	// changeLog is what changed since the pipeline last asked.
	changeLog changeLog
	// statusChanged, when set, hears of changes to the objects whose status
	// the status writer writes (NotifyStatusChanges).
	statusChanged func(kind string, nn types.NamespacedName, statusOnly bool)
}

var _ pipeline.Source = (*Source)(nil)

// New checks opts; nothing is asked of the API server until Run.
func New(opts Options) (*Source, error) {
	if opts.Client == nil || opts.Gateway == nil {
		return nil, errors.New("kubernetes source: Client and Gateway are required")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Discovery == nil {
		opts.Discovery = opts.Client.Discovery()
	}
	return &Source{
		log:        log.With("source", "kubernetes"),
		metrics:    newMetrics(opts.Registerer),
		client:     opts.Client,
		gateway:    opts.Gateway,
		discovery:  opts.Discovery,
		namespaces: opts.Namespaces,
		synced:     make(chan struct{}),
	}, nil
}

// Run asks which Gateway API kinds are served, starts their informers and
// the others', closes Synced once every one of them (and its event
// handler) has seen the initial list, and watches until ctx ends.
func (s *Source) Run(ctx context.Context, changed func()) error {
	kinds, ok := s.discoverUntil(ctx)
	if !ok {
		return nil // ctx ended first
	}
	v, err := newView(s.client, s.gateway, s.namespaces, kinds, s)
	if err != nil {
		return err
	}
	v.start(ctx)
	defer v.shutdown()
	s.log.Info("waiting for informers to sync", "namespaces", v.namespacesForLog())
	if !cache.WaitForCacheSync(ctx.Done(), v.hasSynced...) {
		return nil // ctx ended first
	}
	s.mu.Lock()
	s.view.Store(v)
	s.refs = refsOf(v.policies(), v.gateways(), v.listenerSets(), v.xBackends())
	s.changed = changed
	s.mu.Unlock()
	close(s.synced)
	s.log.Info("informers synced")
	<-ctx.Done()
	return nil
}

// Synced is closed once the first complete view is in the caches.
func (s *Source) Synced() <-chan struct{} { return s.synced }

// ready is the synced view, or nil before Synced.
func (s *Source) ready() *view { return s.view.Load() }

// Inputs returns every policy, Service, EndpointSlice and Gateway API
// object, and the ConfigMaps and Secrets that some policy or Gateway refers
// to. The objects are the informers' cached ones: read-only, like
// everything in translator.Inputs. Before Synced it is empty.
func (s *Source) Inputs() translator.Inputs {
	v := s.ready()
	if v == nil {
		return translator.Inputs{}
	}
	policies, gateways, sets, xBackends := v.policies(), v.gateways(), v.listenerSets(), v.xBackends()
	r := refsOf(policies, gateways, sets, xBackends)
	in := translator.Inputs{
		Policies:        policies,
		Services:        v.services(),
		EndpointSlices:  v.endpointSlices(),
		ConfigMaps:      v.configMaps(r.configMaps),
		Secrets:         v.secrets(r.secrets),
		GatewayClasses:  v.gatewayClasses(),
		Gateways:        gateways,
		ListenerSets:    sets,
		ReferenceGrants: v.referenceGrants(),
		Namespaces:      v.namespaceList(),

		XBackends:               xBackends,
		XBackendTrafficPolicies: v.xBackendTrafficPolicies(),
		XMeshes:                 v.xMeshes(),
	}
	for _, rk := range translator.RouteKinds {
		for _, o := range v.routes(rk.Kind()) {
			if m, ok := o.(metav1.Object); ok {
				rk.Add(&in, m)
			}
		}
	}
	return in
}

// scopeOf is the synced view's listers of namespace ns, or nil.
func (s *Source) scopeOf(ns string) *scope {
	v := s.ready()
	if v == nil {
		return nil
	}
	return v.scopeOf(ns)
}

// Policy returns the cached BackendTLSPolicy namespace/name, for the status
// writer's compare before writing.
func (s *Source) Policy(nn types.NamespacedName) (*gwv1.BackendTLSPolicy, bool) {
	sc := s.scopeOf(nn.Namespace)
	if sc == nil {
		return nil, false
	}
	p, err := sc.policies.BackendTLSPolicies(nn.Namespace).Get(nn.Name)
	return p, err == nil
}
