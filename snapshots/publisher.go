package snapshots

import (
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
)

// Options configure a Publisher.
type Options struct {
	// FleetNamespaces restricts a fleet (Envoy node.cluster) to the listed
	// namespaces, and grants it the private keys of their clusters; Scope
	// says what the fleets absent from the map get.
	FleetNamespaces map[string][]string
	// Scope is what a fleet absent from FleetNamespaces is served of the
	// clusters: ScopeReached when empty.
	Scope      FleetScope
	Logger     *slog.Logger
	Registerer prometheus.Registerer // may be nil in tests
	// OnRefusalsChanged, when set, is called (without the publisher's
	// lock) when Refusals changed other than by Publish: a fleet's Envoy
	// builds changed what it is served (buildcheck.go).
	OnRefusalsChanged func()
}

// Publisher sets one snapshot per connected fleet from the last
// translation, and keeps that translation so a fleet connecting later is
// served at once.
type Publisher struct {
	opts    Options
	log     *slog.Logger
	metrics *metrics
	ready   atomic.Bool
	digests *digests
	fulls   *fullAnswers // the feeds' full answers, shared between fleets
	entries *feedEntries // the feeds' entries, shared between fleets

	mu     sync.Mutex
	last   *translator.Output // last output that passed validation
	patch  *patchable         // whole, kept for patching; nil: build the next whole
	whole  *servedSnapshot    // last output unfiltered: decides "changed" when no fleet is connected
	fleets map[string]*fleetState
	nodes  map[string]*nodeState
	// scopes are the connected Gateway fleets' shares of the whole
	// (ScopeReached), keyless the fleets' without a Gateway. A publish
	// that patched them always goes on to serve their whole (a fleet's
	// fault refuses that fleet, not the publish), so nothing undoes them.
	scopes  map[string]*scope
	keyless *scope
	// granted are the connected fleets' that --fleet-namespaces lists, kept
	// apart from scopes so that no fleet adopts another's grant.
	granted  map[string]*scope
	keyIndex keyIndex
	withheld string // the withheld clusters last logged
	// refusals are the last publish's refused fleets (refusal.go).
	refusals []translator.FleetRefusal
	// consistent is the last output whose shared resources were all
	// served: what a namespace refused later keeps.
	consistent *translator.Output
	// builds are the Envoy builds connected per fleet (sorted), and
	// buildRefusals the clusters they made withheld (buildcheck.go).
	builds        map[string][]EnvoyBuild
	buildRefusals map[string][]translator.FleetRefusal
	tuned         tunedIndex
}

// fleetState is a fleet with open streams; snapshot is nil until the
// first translation.
type fleetState struct {
	streams  int
	snapshot *servedSnapshot
	feed     *Feed // what the fleet's streams read
	// stale: a publish refused the fleet, so its snapshot and feed are
	// older than the last whole: the next one is compared in full.
	stale bool
}

// nodeState maps a node ID to its fleet for DebugSnapshot.
type nodeState struct {
	fleet   string
	streams int
}

// New returns a Publisher with no fleet and nothing published.
func New(opts Options) *Publisher {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &Publisher{
		opts:    opts,
		log:     logger,
		metrics: newMetrics(opts.Registerer),
		fleets:  map[string]*fleetState{},
		nodes:   map[string]*nodeState{},
		scopes:  map[string]*scope{},
		granted: map[string]*scope{},
		digests: newDigests(),
		fulls:   newFullAnswers(),
		entries: newFeedEntries(),

		builds:        map[string][]EnvoyBuild{},
		buildRefusals: map[string][]translator.FleetRefusal{},
	}
	if opts.Registerer != nil {
		opts.Registerer.MustRegister(p.withheldGauge())
	}
	return p
}

// Ready reports that a first translation was published.
func (p *Publisher) Ready() bool { return p.ready.Load() }

// Publish validates and sets one snapshot per fleet from a translation.
// changed=false when every fleet's content equals what is served (nothing
// set, nothing sent). A fleet whose own resources fail a check is refused
// alone: it keeps its previous snapshot, every other fleet is set, and
// Refusals says which and why (refusal.go). err is only for what no fleet
// can be served without (nothing set then).
func (p *Publisher) Publish(out translator.Output) (changed bool, err error) {
	start := time.Now()
	defer func() { p.metrics.duration.Observe(time.Since(start).Seconds()) }()

	p.mu.Lock()
	defer p.mu.Unlock()
	whole, touched, baseRefusals, err := p.containedWhole(out)
	if err != nil {
		p.metrics.publishes.WithLabelValues("error").Inc()
		return false, err
	}
	refusals := append(baseRefusals, p.checkUnservedFleets(out, whole)...)
	pending := map[string]*servedSnapshot{}
	names := map[string]map[string][]string{}
	for fleet, st := range p.fleets {
		fleetTouched := touched
		if st.stale {
			fleetTouched = nil
		}
		snap, fleetNames, err := p.snapshotFor(out, fleet, whole, fleetTouched)
		if err != nil {
			st.stale = true
			refusals = append(refusals, p.refusal(out, fleet, err))
			continue
		}
		if st.snapshot == nil || !sameVersions(st.snapshot, snap) {
			if st.stale || st.snapshot == nil {
				fleetNames = nil // its feed is older than the last whole
			}
			pending[fleet], names[fleet] = snap, fleetNames
		}
	}
	changed = len(pending) > 0 || p.whole == nil || !sameVersions(p.whole, whole)
	for _, fleet := range sortedNames(pending) {
		p.set(fleet, pending[fleet], names[fleet])
		p.fleets[fleet].stale = false
	}
	p.forgetScopes(out)
	p.logWithheld(out)
	p.last, p.whole = &out, whole
	if len(baseRefusals) == 0 {
		p.consistent = &out
	}
	p.ready.Store(true)
	p.countResources(out, whole)
	p.setRefusals(refusals)
	if !changed {
		p.metrics.publishes.WithLabelValues("unchanged").Inc()
		return false, nil
	}
	p.metrics.publishes.WithLabelValues("changed").Inc()
	p.log.Info("snapshot published", append(versionAttrs(whole), "fleets_updated", len(pending), "fleets_refused", len(refusals))...)
	return true, nil
}

// wholeSnapshot is the unrestricted share of out: the last one patched
// with out's changes when out names them since what was last published,
// else built whole. touched is nil when built whole; undo puts a patch
// back. p.mu is held.
func (p *Publisher) wholeSnapshot(out translator.Output) (whole *servedSnapshot, touched map[string][]string, undo func(), err error) {
	if pt := p.patch; pt != nil && out.Changed != nil && out.Changed.Since == pt.gen && p.whole == pt.snap {
		return pt.apply(p.digests, out)
	}
	p.patch = nil
	p.digests.rotate()
	if whole, err = newSnapshot(p.digests, everything(out)); err != nil {
		return nil, nil, nil, err
	}
	if out.Generation != 0 {
		// Only a Translator's Outputs say what changed since the last.
		if p.patch, err = newPatchable(p.digests, out.Generation, whole); err != nil {
			return nil, nil, nil, err
		}
	}
	return whole, nil, func() { p.patch = nil }, nil
}

// patchNames are the names fleet's feed must look at again after a
// patch, given those that changed in its base (nil: unknown), or nil when
// the feed must compare everything: a Gateway fleet whose own resources
// changed has new listeners and routes.
func patchNames(out translator.Output, fleet string, base map[string][]string) map[string][]string {
	if base == nil || out.Changed == nil || slices.Contains(out.Changed.Fleets, fleet) {
		return nil
	}
	return base
}

// countResources sets the resource gauges: what every fleet may be served,
// plus what the Gateway fleets own.
func (p *Publisher) countResources(out translator.Output, whole *servedSnapshot) {
	counts := map[string]int{}
	for _, typeURL := range servedTypes {
		counts[typeURL] = len(whole.GetResources(typeURL))
	}
	for _, own := range out.Fleets {
		counts[resource.ListenerType] += len(own.Listeners)
		counts[resource.RouteType] += len(own.Routes)
		counts[resource.SecretType] += len(own.Secrets)
	}
	for typeURL, n := range counts {
		p.metrics.resources.WithLabelValues(typeURL).Set(float64(n))
	}
}

// NodeStreamOpened registers a stream of node before it reads its fleet's
// feed, so a fleet seen for the first time is fed the last translation.
func (p *Publisher) NodeStreamOpened(node *corev3.Node) {
	fleet := Fleet(node)
	p.mu.Lock()
	before := p.buildRefusals[fleet]
	defer func() {
		changed := !slices.EqualFunc(before, p.buildRefusals[fleet], sameRefusal)
		p.mu.Unlock()
		if changed && p.opts.OnRefusalsChanged != nil {
			p.opts.OnRefusalsChanged()
		}
	}()
	n := p.nodes[node.GetId()]
	if n == nil {
		n = &nodeState{fleet: fleet}
		p.nodes[node.GetId()] = n
	}
	n.streams++
	st := p.fleets[fleet]
	if st == nil {
		st = &fleetState{feed: newFeed(p.fulls, p.entries)}
		p.fleets[fleet] = st
	}
	st.streams++
	if st.snapshot != nil || p.last == nil || p.isRefused(fleet) {
		return
	}
	snap, _, err := p.snapshotFor(*p.last, fleet, p.whole, nil)
	if err != nil {
		p.log.Error("fleet snapshot rejected", "fleet", fleet, "error", err)
		return
	}
	p.set(fleet, snap, nil)
	p.logWithheld(*p.last) // the first fleet without a Gateway makes the keyless scope
}

// NodeStreamClosed undoes NodeStreamOpened. A fleet without streams is
// forgotten; content-hash versions make its next snapshot identical.
func (p *Publisher) NodeStreamClosed(node *corev3.Node) {
	fleet := Fleet(node)
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := p.nodes[node.GetId()]; n != nil {
		if n.streams--; n.streams <= 0 {
			delete(p.nodes, node.GetId())
		}
	}
	if st := p.fleets[fleet]; st != nil {
		if st.streams--; st.streams <= 0 {
			delete(p.fleets, fleet)
			delete(p.scopes, fleet)
			delete(p.granted, fleet)
		}
	}
}

// Origins returns the policies that produced the named clusters, load
// assignments or secrets in the last translation, sorted and unique.
func (p *Publisher) Origins(names []string) []types.NamespacedName {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		return nil
	}
	seen := map[types.NamespacedName]bool{}
	var out []types.NamespacedName
	for _, name := range names {
		for _, policy := range p.last.Origins[name] {
			if !seen[policy] {
				seen[policy] = true
				out = append(out, policy)
			}
		}
	}
	sortPolicies(out)
	return out
}

// snapshotFor builds fleet's snapshot, and the names per type its feed
// must look at (nil: all); p.mu is held. A Gateway fleet adds its own
// resources to its base (baseFor). touched, when not nil, names per type
// what changed in whole since the last publish.
func (p *Publisher) snapshotFor(out translator.Output, fleet string, whole *servedSnapshot, touched map[string][]string) (*servedSnapshot, map[string][]string, error) {
	base, baseNames, err := p.baseFor(out, fleet, whole, touched)
	if err != nil {
		return nil, nil, fmt.Errorf("fleet %q: %w", fleet, err)
	}
	wasHeld := len(p.buildRefusals[fleet]) > 0
	held, err := p.withholdForBuilds(out, fleet, whole, base, touched)
	if err != nil {
		return nil, nil, fmt.Errorf("fleet %q: %w", fleet, err)
	}
	if held != nil {
		base = held
	}
	if held != nil || wasHeld {
		baseNames = nil // the fleet's clusters differ from its base's
	}
	names := patchNames(out, fleet, baseNames)
	own := out.Fleets[fleet]
	if own == nil {
		return base, names, nil
	}
	var prev *servedSnapshot
	if st := p.fleets[fleet]; st != nil {
		prev = st.snapshot
	}
	snap, err := gatewaySnapshot(p.digests, base, own, prev, baseNames)
	if err != nil {
		return nil, nil, fmt.Errorf("fleet %q: %w", fleet, err)
	}
	return snap, names, nil
}

// baseFor is what fleet is served of the whole translation, with the
// names per type that changed in it since the last publish (nil: unknown).
// A fleet listed in FleetNamespaces gets its namespaces' clusters (and, a
// Gateway fleet, of those only what its routes reach unless ScopeAll);
// under ScopeAll any other fleet gets whole; under ScopeReached a Gateway
// fleet gets what its routes reach and any other fleet every cluster that
// reads no private key. p.mu is held.
func (p *Publisher) baseFor(out translator.Output, fleet string, whole *servedSnapshot, touched map[string][]string) (*servedSnapshot, map[string][]string, error) {
	own := out.Fleets[fleet]
	reached := p.opts.Scope != ScopeAll && own != nil
	_, connected := p.fleets[fleet]
	if granted, restricted := p.opts.FleetNamespaces[fleet]; restricted && whole != nil {
		var only []string // nil: no Gateway's reach
		if reached {
			if only = own.Reached; only == nil {
				only = []string{} // routes that reach nothing: no cluster
			}
		}
		s := p.granted[fleet]
		if s != nil && ((s.reached == nil) != (only == nil) || (only != nil && !sameSlice(s.src, only))) {
			s = nil // its routes reach other clusters, or it gained or lost its Gateway: made again
		}
		if s != nil {
			s.clusterNamespaces = out.ClusterNamespaces
		}
		s, err := p.updated(s, whole, touched, func() (*scope, error) {
			return grantedScope(p.digests, whole, granted, out.ClusterNamespaces, only)
		})
		if err != nil {
			return nil, nil, err
		}
		if connected {
			p.granted[fleet] = s
		}
		return s.snap, s.changed, nil
	}
	if _, restricted := p.opts.FleetNamespaces[fleet]; restricted || whole == nil {
		var only []string
		if reached {
			only = own.Reached
			if only == nil {
				only = []string{} // routes that reach nothing: no cluster
			}
		}
		res, err := resourcesFor(p.digests, out, fleet, p.opts.FleetNamespaces, only)
		if err != nil {
			return nil, nil, err
		}
		base, err := newSnapshot(p.digests, res)
		return base, nil, err
	}
	if p.opts.Scope == ScopeAll {
		return whole, touched, nil
	}
	if reached {
		s := p.scopes[fleet]
		if s != nil && !sameSlice(s.src, own.Reached) {
			s = nil // its routes reach other clusters: made again
		}
		// A scope another fleet kept names its changes since that fleet's
		// last publish, not this one's: unknown here.
		adopted := false
		if s == nil {
			s = p.scopeOfReached(own.Reached)
			adopted = s != nil
		}
		s, err := p.updated(s, whole, touched, func() (*scope, error) { return reachedScope(p.digests, whole, own.Reached) })
		if err != nil {
			return nil, nil, err
		}
		if connected {
			p.scopes[fleet] = s
		}
		if adopted {
			return s.snap, nil, nil
		}
		return s.snap, s.changed, nil
	}
	if !p.anyKeys(whole, touched) {
		// Nothing to withhold: the whole itself, compared whole when the
		// fleet was last served a keyless scope (a secret only withheld
		// clusters read is served again, unnamed in touched).
		if connected {
			p.keyless = nil
		}
		if st := p.fleets[fleet]; st == nil || st.snapshot == nil || !sameMap(st.snapshot.byType[resource.ClusterType], whole.byType[resource.ClusterType]) {
			return whole, nil, nil
		}
		return whole, touched, nil
	}
	s, err := p.updated(p.keyless, whole, touched, func() (*scope, error) { return keylessScope(p.digests, whole) })
	if err != nil {
		return nil, nil, err
	}
	if connected {
		p.keyless = s
	}
	return s.snap, s.changed, nil
}

// updated is s made from whole: s itself when it is, s patched when it
// was made from the last publish's whole and touched says what changed
// since, else fresh's.
func (p *Publisher) updated(s *scope, whole *servedSnapshot, touched map[string][]string, fresh func() (*scope, error)) (*scope, error) {
	switch {
	case s != nil && s.whole == whole:
		return s, nil
	case s != nil && touched != nil && p.patch != nil && p.whole != nil && s.whole == p.whole:
		s.patch(p.patch, whole, touched)
		return s, nil
	}
	return fresh()
}

// scopeOfReached is a connected fleet's scope made from the very same
// Reached slice, or nil: the translator hands fleets that reach the same
// clusters one slice (the mesh's fleets without consumer routes), and
// they share one scope, patched once per publish, not once per fleet. A
// scope holds nothing of a fleet's own.
func (p *Publisher) scopeOfReached(reached []string) *scope {
	if len(reached) == 0 {
		return nil
	}
	for _, s := range p.scopes {
		if sameSlice(s.src, reached) {
			return s
		}
	}
	return nil
}

// forgetScopes drops the scopes of fleets that have no Gateway any more,
// and the keyless scope when no fleet without one is connected.
func (p *Publisher) forgetScopes(out translator.Output) {
	plain := false
	for fleet := range p.fleets {
		if out.Fleets[fleet] == nil {
			plain = true
		}
	}
	for fleet := range p.scopes {
		if out.Fleets[fleet] == nil {
			delete(p.scopes, fleet)
		}
	}
	if !plain {
		p.keyless = nil
	}
}

// checkUnservedFleets checks the Gateway fleets no stream reads yet, so
// a broken fleet is refused whoever is connected; their snapshots are
// built when a stream opens. p.mu is held.
func (p *Publisher) checkUnservedFleets(out translator.Output, whole *servedSnapshot) []translator.FleetRefusal {
	var refusals []translator.FleetRefusal
	for _, fleet := range sortedNames(out.Fleets) {
		if _, served := p.fleets[fleet]; served || out.Fleets[fleet] == nil {
			continue
		}
		if _, err := checkFleet(p.digests, whole, out.Fleets[fleet], nil); err != nil {
			refusals = append(refusals, p.refusal(out, fleet, fmt.Errorf("fleet %q: %w", fleet, err)))
		}
	}
	return refusals
}

// set makes a validated snapshot what fleet's feed serves, looking only
// at names (per type) when they are given; p.mu is held.
func (p *Publisher) set(fleet string, snap *servedSnapshot, names map[string][]string) {
	if st := p.fleets[fleet]; st != nil {
		st.snapshot = snap
		if names != nil {
			st.feed.patch(snap, names)
		} else {
			st.feed.update(snap)
		}
	}
}

// Feed is what the streams of fleet read; nil until a stream of the
// fleet opened (NodeStreamOpened). It stays the fleet's while any of its
// streams is open.
func (p *Publisher) Feed(fleet string) *Feed {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.fleets[fleet]; st != nil {
		return st.feed
	}
	return nil
}

// ServesCluster reports whether the last translation serves cluster to
// fleet: what a fleet may report statistics about, so that one fleet's
// Envoys cannot speak for clusters only another fleet is served.
func (p *Publisher) ServesCluster(fleet, cluster string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		return false
	}
	if st := p.fleets[fleet]; st != nil && st.snapshot != nil {
		_, served := st.snapshot.GetResources(resource.ClusterType)[cluster]
		return served
	}
	ns, known := p.last.ClusterNamespaces[cluster]
	if !known {
		return false
	}
	allowed, restricted := p.opts.FleetNamespaces[fleet]
	return !restricted || slices.Contains(allowed, ns)
}

// sameMap: a and b are the very same map (a patched whole keeps its maps).
func sameMap[K comparable, V any](a, b map[K]V) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
