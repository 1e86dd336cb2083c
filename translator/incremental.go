package translator

import (
	"reflect"
	"slices"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/input"
)

// Update is Translate of the last call's objects with changes applied, at
// the cost of what the changes reach: the policies they judge again, the
// Services those policies and objects reach, and the statuses of the
// policies on those Services. Its Output equals Translate's for the same
// objects, and names in Changed what differs from the last Output.
//
// computed is the caller's last status of each policy: a policy whose
// object carries no ancestors starts from it (the pipeline's rule for
// Translate's previous). ok is false, and nothing is translated, when the
// Translator has no whole translation with these options to start from
// or a change is not of an input kind: translate the whole Inputs then.
func (t *Translator) Update(changes []Change, computed PreviousStatus, now time.Time, opts Options) (out Output, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	opts = withDefaults(opts)
	if t.world == nil && t.whole != nil && opts == t.opts {
		t.world, t.whole = t.buildWorld(t.whole), nil
	}
	w := t.world
	if w == nil || t.forget || opts != t.opts {
		return Output{}, false
	}
	u := newUpdate()
	for _, c := range changes {
		if !w.apply(c, u) {
			t.world = nil // partly applied: only a whole translation is sound now
			return Output{}, false
		}
	}
	w.refreshSlices(u)
	t.rejudge(u)
	t.reattach(u)
	t.retranslate(u)
	stamp := metav1.NewTime(now.UTC().Truncate(time.Second))
	if u.gateways || len(u.routes)+len(u.grpcRoutes) > 0 && !w.patchRoutes(u, stamp) {
		t.retranslateGateways(u, stamp)
	}
	w.notesDue(u, now)
	t.restatus(u, computed, now, stamp)
	t.generation++
	return w.output(u, t.generation, t.fleetEmitter()), true
}

// update is what one Update found the changes to reach.
type update struct {
	policies    map[types.NamespacedName]*gwv1.BackendTLSPolicy // changed: the object now, nil when deleted
	refs        map[backendtls.Ref]bool                         // ConfigMaps and Secrets changed
	services    map[types.NamespacedName]bool                   // to translate again
	slices      map[types.NamespacedName]bool                   // Services whose EndpointSlices changed
	gateways    bool                                            // the Gateway rules run whole
	routes      map[types.NamespacedName]bool                   // HTTPRoutes changed
	grpcRoutes  map[types.NamespacedName]bool                   // GRPCRoutes changed
	judged      map[types.NamespacedName]bool                   // policies judged again
	attached    map[types.NamespacedName]bool                   // policies whose attachments are redone
	statuses    map[types.NamespacedName]bool                   // policies whose status is redone
	clusters    map[string]bool                                 // names whose resources may have changed
	endpoints   map[string]bool
	secrets     map[string]bool
	warnings    bool
	fleetsDirty bool
	// reachChanged: the Service ports some Gateway's routes reach changed.
	reachChanged bool
	// changedFleets are the fleets whose resources changed, when known
	// (nil: any may have).
	changedFleets map[string]bool

	newStatuses map[types.NamespacedName]gwv1.PolicyStatus
}

func newUpdate() *update {
	return &update{
		policies: map[types.NamespacedName]*gwv1.BackendTLSPolicy{}, refs: map[backendtls.Ref]bool{},
		services: map[types.NamespacedName]bool{}, slices: map[types.NamespacedName]bool{}, routes: map[types.NamespacedName]bool{},
		grpcRoutes: map[types.NamespacedName]bool{},
		judged:     map[types.NamespacedName]bool{}, attached: map[types.NamespacedName]bool{}, statuses: map[types.NamespacedName]bool{},
		clusters: map[string]bool{}, endpoints: map[string]bool{}, secrets: map[string]bool{},
	}
}

// apply puts one change into the world's objects and notes what it
// reaches; false when the change is not of an input kind and type.
func (w *world) apply(c Change, u *update) bool {
	nn := input.NameOf(c.Key.Namespace, c.Key.Name)
	deleted := c.Object == nil || reflect.ValueOf(c.Object).IsNil()
	switch c.Kind {
	case KindBackendTLSPolicy:
		p, ok := typed[*gwv1.BackendTLSPolicy](c.Object, deleted)
		u.policies[nn] = p
		return ok
	case KindService:
		ok := store(w.ix.Services, nn, c.Object, deleted)
		u.services[nn] = true
		u.gateways = u.gateways || w.gateway.any()
		return ok
	case KindEndpointSlice:
		es, ok := typed[*discoveryv1.EndpointSlice](c.Object, deleted)
		if old := w.slices[nn]; old != nil {
			svc := serviceOfSlice(old)
			removeFrom(w.slicesOf, svc, nn)
			u.slices[svc] = true
		}
		setOrDelete(w.slices, nn, es, deleted)
		if !deleted {
			w.addSliceKey(es, nn)
			u.slices[serviceOfSlice(es)] = true
		}
		return ok
	case KindConfigMap:
		u.refs[backendtls.Ref{Kind: KindConfigMap, Name: nn}] = true
		u.gateways = u.gateways || w.gateway.namesCA(KindConfigMap, nn) // client CAs
		return store(w.ix.ConfigMaps, nn, c.Object, deleted)
	case KindSecret:
		ok := store(w.ix.Secrets, nn, c.Object, deleted)
		u.refs[backendtls.Ref{Kind: KindSecret, Name: nn}] = true
		u.gateways = u.gateways || w.gateway.any() // listener certificates
		return ok
	case KindGatewayClass:
		u.gateways = true
		return store(w.gateway.classes, c.Key, c.Object, deleted)
	case KindGateway:
		u.gateways = true
		return store(w.gateway.gateways, nn, c.Object, deleted)
	case KindHTTPRoute:
		u.routes[nn] = true
		return store(w.gateway.routes, nn, c.Object, deleted)
	case KindGRPCRoute:
		return w.applyGRPCRoute(c, nn, deleted, u)
	case KindTLSRoute:
		return applyStreamRoute(w, w.gateway.tlsRoutes, w.ix.StreamBackends, c, nn, deleted, u, input.TLSRouteBackends)
	case KindTCPRoute:
		return applyStreamRoute(w, w.gateway.tcpRoutes, w.ix.StreamBackends, c, nn, deleted, u, input.TCPRouteBackends)
	case KindUDPRoute:
		return applyStreamRoute(w, w.gateway.udpRoutes, w.ix.DatagramBackends, c, nn, deleted, u, input.UDPRouteBackends)
	case KindListenerSet:
		u.gateways = true
		return store(w.gateway.sets, nn, c.Object, deleted)
	case KindReferenceGrant:
		u.gateways = true
		return store(w.gateway.grants, nn, c.Object, deleted)
	case KindNamespace:
		u.gateways = true
		return store(w.gateway.namespaces, c.Key, c.Object, deleted)
	}
	return false
}

// typed is a change's object as T; a deletion is T's nil.
func typed[T any](o metav1.Object, deleted bool) (T, bool) {
	var zero T
	if deleted {
		return zero, true
	}
	v, ok := o.(T)
	return v, ok
}

// store puts the change's object, a T, into m under k, or deletes k; false
// when the object is not a T.
func store[K comparable, T any](m map[K]T, k K, o metav1.Object, deleted bool) bool {
	v, ok := typed[T](o, deleted)
	setOrDelete(m, k, v, deleted)
	return ok
}

func setOrDelete[K comparable, V any](m map[K]V, k K, v V, deleted bool) {
	if deleted {
		delete(m, k)
		return
	}
	m[k] = v
}

// refreshSlices rebuilds the EndpointSlice lists of the Services whose
// slices changed, in key order.
func (w *world) refreshSlices(u *update) {
	for svc := range u.slices {
		if svc == (types.NamespacedName{}) {
			continue // a slice without the service-name label serves nothing
		}
		u.services[svc] = true
		keys := w.slicesOf[svc]
		if len(keys) == 0 {
			delete(w.ix.SlicesByService, svc)
			continue
		}
		list := make([]*discoveryv1.EndpointSlice, 0, len(keys))
		for _, key := range input.SortedKeys(keys) {
			list = append(list, w.slices[key])
		}
		w.ix.SlicesByService[svc] = list
	}
}

// rejudge judges again the changed policies and those whose CA objects
// changed; every Service they target, before and after, is translated
// again.
func (t *Translator) rejudge(u *update) {
	w := t.world
	for nn, p := range u.policies {
		u.judged[nn] = true
		for _, svc := range w.targets[nn] {
			u.services[svc] = true
		}
		if old := w.policies[nn]; old != nil {
			w.unindex(nn, old)
		}
		setOrDelete(w.policies, nn, p, p == nil)
		if p != nil {
			w.index(nn, p)
		}
	}
	for ref := range u.refs {
		for nn := range w.byRef[ref] {
			u.judged[nn] = true
		}
	}
	for nn := range u.judged {
		p := w.policies[nn]
		if p == nil {
			delete(w.verdicts, nn)
			delete(t.verdicts.entries, nn)
			delete(t.statuses.entries, nn)
			continue
		}
		w.verdicts[nn] = t.judge(p, w.ix)
		for _, svc := range w.targets[nn] {
			u.services[svc] = true
		}
	}
}

// reattach redoes the attachments of every policy naming a Service to
// translate again, and the winners on those Services.
func (t *Translator) reattach(u *update) {
	w := t.world
	for nn := range u.judged {
		u.attached[nn] = true
	}
	for svc := range u.services {
		for nn := range w.byService[svc] {
			u.attached[nn] = true
		}
	}
	order := input.SortedKeys(u.attached)
	for _, nn := range order {
		for _, a := range w.attachments[nn] {
			if u.services[a.Target.Service] {
				delete(w.winners, a.Target)
			}
		}
	}
	var fresh []*backendtls.Attachment
	for _, nn := range order {
		g := w.verdicts[nn]
		if g == nil {
			delete(w.attachments, nn)
			continue
		}
		v := g.verdict
		refs := v.Policy.Spec.TargetRefs
		as := make([]*backendtls.Attachment, len(refs))
		for i, ref := range refs {
			a := &backendtls.Attachment{}
			as[i] = a
			if a.Resolve(v, ref, w.ix) && u.services[a.Target.Service] {
				backendtls.Compete(w.winners, a)
			}
		}
		w.attachments[nn] = as
		fresh = append(fresh, as...)
	}
	for _, a := range fresh {
		a.SetWinner(w.winners)
	}
	for nn := range u.attached {
		u.statuses[nn] = true
	}
}

// retranslate translates the reached Services again: first every old port
// leaves the output's shared parts, then the new ones join, so a CA secret
// all of them move to is counted once.
func (t *Translator) retranslate(u *update) {
	w := t.world
	for svc := range u.services {
		old := w.ports[svc]
		w.count(svc, old, -1)
		w.produce(old, false)
		u.touch(old)
	}
	var governors []*backendtls.Verdict
	for svc := range u.services {
		s := w.ix.Services[svc]
		if s == nil {
			delete(w.ports, svc)
			delete(w.unserved, svc)
			delete(t.services.entries, svc)
			continue
		}
		governors = governors[:0]
		for _, port := range s.Spec.Ports {
			governors = append(governors, backendtls.Governing(w.winners, svc, port))
		}
		ports := t.servicePorts(s, svc, governors, w.ix, w.verdicts)
		w.ports[svc] = ports
		w.count(svc, ports, 1)
		w.produce(ports, true)
		u.touch(ports)
		var unserved []backendtls.UnservedPort
		for i := range ports {
			if ports[i].cluster == nil && ports[i].policy != nil {
				unserved = append(unserved, ports[i].unservedPort())
			}
		}
		setOrDelete(w.unserved, svc, unserved, len(unserved) == 0)
	}
}

// touch notes the names ports produce as possibly changed.
func (u *update) touch(ports []portOutput) {
	for i := range ports {
		p := &ports[i]
		u.warnings = u.warnings || len(p.warnings) > 0
		if p.cluster == nil {
			continue
		}
		u.clusters[p.cluster.Name] = true
		if p.endpoint != nil {
			u.endpoints[p.endpoint.ClusterName] = true
		}
		for _, s := range p.secrets {
			u.secrets[s.Name] = true
		}
	}
}

// retranslateGateways runs the Gateway rules again; the policies on the
// Services their routes reached, before or after, get their statuses
// redone (their Gateway ancestors may have changed).
func (t *Translator) retranslateGateways(u *update, stamp metav1.Time) {
	w := t.world
	old := w.gateways
	w.gateways = t.translateGateways(w.gateway.inputs(), w.ix, stamp)
	w.gateways.ownClusters = old.ownClusters // what it made is reused where the bases are the same
	// Only the policies on a Service port whose reaching Gateways changed
	// get new Gateway ancestors: a route edit re-runs the Gateway rules
	// for every route, but need not redo 10,000 policy statuses.
	for _, reach := range []map[input.ServicePort][]types.NamespacedName{old.judged.Reach, w.gateways.judged.Reach} {
		for backend := range reach {
			if slices.Equal(old.judged.Reach[backend], w.gateways.judged.Reach[backend]) {
				continue
			}
			for nn := range w.byService[backend.Service] {
				u.statuses[nn] = true
			}
		}
	}
	for _, warning := range old.warnings {
		if w.warnings[warning]--; w.warnings[warning] == 0 {
			delete(w.warnings, warning)
		}
	}
	for _, warning := range w.gateways.warnings {
		w.warnings[warning]++
	}
	u.warnings = u.warnings || len(old.warnings)+len(w.gateways.warnings) > 0
	u.fleetsDirty = true
}

// notesDue adds the policies whose CA expiry warning changed since the
// last call (the clock moved past a window's start or an expiry).
func (w *world) notesDue(u *update, now time.Time) {
	if w.firstDue.IsZero() || now.Before(w.firstDue) {
		return
	}
	w.firstDue = time.Time{}
	for nn, due := range w.noteDue {
		if !now.Before(due) {
			u.statuses[nn] = true
		} else if w.firstDue.IsZero() || due.Before(w.firstDue) {
			w.firstDue = due
		}
	}
}

// restatus computes the status of every policy the update reached.
func (t *Translator) restatus(u *update, computed PreviousStatus, now time.Time, stamp metav1.Time) {
	w := t.world
	for _, nn := range input.SortedKeys(u.statuses) {
		g := w.verdicts[nn]
		if g == nil {
			delete(w.noteDue, nn)
			continue
		}
		v := g.verdict
		as := w.attachments[nn]
		for _, a := range as {
			a.CANote = ""
			a.MarkUnserved(w.unserved[a.Target.Service], w.ix)
		}
		prev := v.Policy.Status
		if st, ok := computed[nn]; ok && len(prev.Ancestors) == 0 {
			prev = st
		}
		u.setStatus(w, nn, t.policyStatus(v, as, prev, w.gateways.judged.Reach, w.ix, now, stamp))
		w.scheduleNote(v, now, t.policyConfig)
	}
}
