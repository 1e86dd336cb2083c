package provisioner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/infrastructure"
)

// FieldManager owns the provisioned fields in managedFields; a field set by
// someone else (replicas scaled by an autoscaler) is left to them.
const FieldManager = "tlsplane-provisioner"

// GatewayCache is the informers' copy of the Gateways and ListenerSets;
// *informers.Source is one.
type GatewayCache interface {
	Gateway(types.NamespacedName) (*gwv1.Gateway, bool)
	ListenerSet(types.NamespacedName) (*gwv1.ListenerSet, bool)
}

// Options configure a Provisioner.
type Options struct {
	// Client writes the provisioned objects and watches them. Required.
	Client kubernetes.Interface
	// Cache holds the Gateways. Required.
	Cache GatewayCache
	// Controller is tlsplane's controllerName. Required.
	Controller gwv1.GatewayController
	Config     Config
	// Namespaces restricts what tlsplane watches (--namespaces); empty
	// means all. The provisioned objects are watched only in
	// Config.Infrastructure.Namespaces (all of these with "*").
	Namespaces []string
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// Provisioner is a pipeline.GatewayAPISink: each report of statuses says
// which Gateways are of our classes and accepted.
type Provisioner struct {
	opts   Options
	log    *slog.Logger
	owned  *owned
	synced chan struct{} // closed once the owned caches synced
	writes *prometheus.CounterVec

	mu       sync.Mutex
	reported chan struct{} // closed by the first report
	// ours are the Gateways of our classes; accepted those of them
	// Accepted, which are provisioned.
	ours, accepted map[types.NamespacedName]bool
	// listenerSets are the accepted ListenerSets of each Gateway, sorted:
	// their listeners are the Gateway's too.
	listenerSets map[types.NamespacedName][]types.NamespacedName
	// queued is the UID and generation each accepted Gateway was last
	// queued with: a report that changes neither queues nothing.
	queued map[types.NamespacedName]string
	// applied is what this replica last applied to each object; a write
	// is skipped when it equals what is wanted, even before the informer
	// shows it. An event showing something else forgets it.
	applied map[objectKey]string
	// queue exists only while this replica leads.
	queue workqueue.TypedRateLimitingInterface[types.NamespacedName]
}

// New checks opts; nothing is watched before Run, nothing written before Lead.
func New(opts Options) (*Provisioner, error) {
	if opts.Client == nil || opts.Cache == nil || opts.Controller == "" {
		return nil, errors.New("gateway provisioner: Client, Cache and Controller are required")
	}
	if err := opts.Config.Check(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Provisioner{
		opts: opts, log: log.With("component", "provisioner"),
		synced: make(chan struct{}), reported: make(chan struct{}),
		ours: map[types.NamespacedName]bool{}, accepted: map[types.NamespacedName]bool{},
		queued: map[types.NamespacedName]string{}, applied: map[objectKey]string{},
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlsplane_gateway_provisioner_writes_total",
			Help: "Writes of provisioned Gateway objects, by kind, operation (apply, delete) and result (ok, error).",
		}, []string{"kind", "operation", "result"}),
	}
	if opts.Registerer != nil {
		if err := opts.Registerer.Register(p.writes); err != nil {
			return nil, err
		}
	}
	watched := opts.Config.Infrastructure.Namespaces
	if slices.Contains(watched, infrastructure.AllNamespaces) {
		watched = opts.Namespaces
	}
	owned, err := newOwned(opts.Client, watched, p.log, p.ownedChanged)
	if err != nil {
		return nil, err
	}
	p.owned = owned
	return p, nil
}

// Run watches the provisioned objects until ctx ends.
func (p *Provisioner) Run(ctx context.Context) error {
	if p.owned.run(ctx) {
		close(p.synced)
	}
	<-ctx.Done()
	return nil
}

// Report takes the BackendTLSPolicy statuses, which say nothing of Gateways.
func (p *Provisioner) Report(map[types.NamespacedName]gwv1.PolicyStatus) {}

// ReportGatewayAPI records which Gateways are ours and accepted, and
// queues those whose spec (generation) or standing changed.
func (p *Provisioner) ReportGatewayAPI(statuses translator.GatewayAPIStatuses) {
	ours, accepted := map[types.NamespacedName]bool{}, map[types.NamespacedName]bool{}
	for nn, st := range statuses.Gateways {
		ours[nn] = true
		if meta.IsStatusConditionTrue(st.Conditions, string(gwv1.GatewayConditionAccepted)) {
			accepted[nn] = true
		}
	}
	sets := p.acceptedListenerSets(statuses.ListenerSets)
	p.mu.Lock()
	defer p.mu.Unlock()
	wasOurs, was := p.ours, p.accepted
	p.ours, p.accepted, p.listenerSets = ours, accepted, sets
	for nn := range wasOurs {
		if !ours[nn] {
			p.queueLocked(nn) // left our classes (or deleted): what it has goes
			delete(p.queued, nn)
		}
	}
	for nn := range accepted {
		if !was[nn] || p.queued[nn] != p.versionLocked(nn) {
			p.queueLocked(nn)
		}
	}
	select {
	case <-p.reported:
	default:
		close(p.reported)
	}
}

// acceptedListenerSets are the Accepted ListenerSets by parent Gateway.
func (p *Provisioner) acceptedListenerSets(statuses map[types.NamespacedName]gwv1.ListenerSetStatus) map[types.NamespacedName][]types.NamespacedName {
	out := map[types.NamespacedName][]types.NamespacedName{}
	for nn, st := range statuses {
		if !meta.IsStatusConditionTrue(st.Conditions, string(gwv1.ListenerSetConditionAccepted)) {
			continue
		}
		ls, ok := p.opts.Cache.ListenerSet(nn)
		if !ok {
			continue
		}
		parent := types.NamespacedName{Namespace: ls.Namespace, Name: string(ls.Spec.ParentRef.Name)}
		if ns := ls.Spec.ParentRef.Namespace; ns != nil && *ns != "" {
			parent.Namespace = string(*ns)
		}
		out[parent] = append(out[parent], nn)
	}
	for _, sets := range out {
		slices.SortFunc(sets, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	}
	return out
}

// listenerSetsLocked are the cached accepted ListenerSets of Gateway nn;
// p.mu is held.
func (p *Provisioner) listenerSetsLocked(nn types.NamespacedName) []*gwv1.ListenerSet {
	var out []*gwv1.ListenerSet
	for _, set := range p.listenerSets[nn] {
		if ls, ok := p.opts.Cache.ListenerSet(set); ok {
			out = append(out, ls)
		}
	}
	return out
}

// versionLocked is what makes a Gateway's objects: its UID and generation,
// and those of its accepted ListenerSets; p.mu is held.
func (p *Provisioner) versionLocked(nn types.NamespacedName) string {
	gw, ok := p.opts.Cache.Gateway(nn)
	if !ok {
		return ""
	}
	v := fmt.Sprintf("%s/%d", gw.UID, gw.Generation)
	for _, ls := range p.listenerSetsLocked(nn) {
		v += fmt.Sprintf(" %s/%s/%d", ls.Name, ls.UID, ls.Generation)
	}
	return v
}

// queueLocked queues nn while leading; p.mu is held.
func (p *Provisioner) queueLocked(nn types.NamespacedName) {
	if p.queue == nil {
		return // the next term checks every Gateway
	}
	p.queued[nn] = p.versionLocked(nn)
	p.queue.Add(nn)
}

// objectKey names one provisioned object.
type objectKey struct {
	kind            kind
	namespace, name string
}

// ownedChanged hears of a provisioned object added, edited or deleted: its
// Gateway is checked again (an object of ours someone edited or deleted is
// put back; our own writes coming back compare equal).
func (p *Provisioner) ownedChanged(k kind, obj metav1.Object, deleted bool) {
	gateway, ok := ownerGateway(obj)
	if !ok || obj.GetAnnotations()[ControllerAnnotation] != string(p.opts.Controller) {
		return
	}
	key := objectKey{k, obj.GetNamespace(), obj.GetName()}
	p.mu.Lock()
	defer p.mu.Unlock()
	if deleted || obj.GetAnnotations()[AppliedAnnotation] != p.applied[key] {
		delete(p.applied, key)
	}
	if p.queue != nil {
		p.queue.Add(gateway)
	}
}

// appliedLast is what this replica last applied to key, "" for nothing
// known.
func (p *Provisioner) appliedLast(key objectKey) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.applied[key]
}

func (p *Provisioner) recordApplied(key objectKey, hash string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.applied[key] = hash
}

// Lead provisions until ctx ends (a term of leadership): once the watched
// objects synced and a first translation reported, every Gateway of ours
// and every owner of a provisioned object is checked, then each change.
func (p *Provisioner) Lead(ctx context.Context) {
	for _, ch := range []chan struct{}{p.synced, p.reported} {
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
		workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "provisioner"})
	p.mu.Lock()
	p.queue = queue
	for nn := range p.ours {
		p.queueLocked(nn)
	}
	p.owned.owners(func(nn types.NamespacedName, controller string) {
		if controller == string(p.opts.Controller) {
			p.queueLocked(nn)
		}
	})
	p.mu.Unlock()
	p.log.Info("provisioning Gateways", "controller", p.opts.Controller, "image", p.opts.Config.Image, "xds", p.opts.Config.XDSAddress)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for p.next(ctx, queue) {
		}
	}()
	<-ctx.Done()
	p.mu.Lock()
	p.queue = nil
	p.mu.Unlock()
	queue.ShutDown()
	<-done
}

// next syncs one queued Gateway; false when the queue shut down.
func (p *Provisioner) next(ctx context.Context, queue workqueue.TypedRateLimitingInterface[types.NamespacedName]) bool {
	nn, shutdown := queue.Get()
	if shutdown {
		return false
	}
	defer queue.Done(nn)
	if ctx.Err() != nil {
		return false // no write after the term ended
	}
	if err := p.sync(ctx, nn); err != nil {
		p.log.Warn("provisioning failed; retrying", "gateway", nn.String(), "error", err)
		queue.AddRateLimited(nn)
		return true
	}
	queue.Forget(nn)
	return true
}

// sync brings Gateway nn's objects where they should be: applied while it
// is accepted, kept while it is ours but not accepted, deleted once it
// left our classes; a deleted Gateway's go with the garbage collector.
// A Gateway outside --provision-namespaces is never written for.
func (p *Provisioner) sync(ctx context.Context, nn types.NamespacedName) error {
	gw, ok := p.opts.Cache.Gateway(nn)
	if !ok || gw.DeletionTimestamp != nil || !p.opts.Config.Infrastructure.Provisions(nn.Namespace) {
		// Outside --provision-namespaces nothing is written (the RBAC
		// would refuse it); its status says so.
		return nil
	}
	p.mu.Lock()
	ours, accepted, sets := p.ours[nn], p.accepted[nn], p.listenerSetsLocked(nn)
	p.mu.Unlock()
	switch {
	case accepted:
		objs, err := Build(gw, sets, p.opts.Controller, p.opts.Config)
		if err != nil {
			p.log.Warn("not provisioned", "gateway", nn.String(), "error", err)
			return nil // retrying cannot help: the next change of the Gateway is checked
		}
		return p.ensure(ctx, gw, objs)
	case ours:
		return nil
	default:
		return p.remove(ctx, gw)
	}
}
