package translator

import (
	"reflect"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/smallset"
)

// update is what one Update found the changes to reach.
type update struct {
	policies    map[types.NamespacedName]*gwv1.BackendTLSPolicy // changed: the object now, nil when deleted
	refs        map[backendtls.Ref]bool                         // ConfigMaps and Secrets changed
	crls        map[string]bool                                 // fetched revocation lists changed, by URL
	crlWants    bool                                            // a verdict wanting distribution points changed
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
	// xbackends: an XBackend, or an object XBackends may read, changed:
	// every XBackend is judged again (they are few).
	xbackends bool
	// reachChanged: the Service ports some Gateway's routes reach changed.
	reachChanged bool
	// changedFleets are the fleets whose resources changed, when known
	// (nil: any may have).
	changedFleets map[string]bool

	newStatuses map[types.NamespacedName]gwv1.PolicyStatus
}

func newUpdate() *update {
	return &update{
		policies: map[types.NamespacedName]*gwv1.BackendTLSPolicy{}, refs: map[backendtls.Ref]bool{}, crls: map[string]bool{},
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
			smallset.Remove(w.slicesOf, svc, nn)
			u.slices[svc] = true
		}
		setOrDelete(w.slices, nn, es, deleted)
		if !deleted {
			w.addSliceKey(es, nn)
			u.slices[serviceOfSlice(es)] = true
		}
		return ok
	case KindXBackend:
		x, ok := typed[*gwxv1a1.XBackend](c.Object, deleted)
		if deleted {
			delete(w.ix.XBackends, nn)
		} else {
			w.ix.XBackends[nn] = input.XBackend{Object: x}
		}
		u.xbackends, u.gateways = true, true
		return ok
	case KindConfigMap:
		u.xbackends = u.xbackends || len(w.ix.XBackends) > 0 // CA bundles
		u.refs[backendtls.Ref{Kind: KindConfigMap, Name: nn}] = true
		u.gateways = u.gateways || w.gateway.namesCA(KindConfigMap, nn) // client CAs
		return store(w.ix.ConfigMaps, nn, c.Object, deleted)
	case KindSecret:
		u.xbackends = u.xbackends || len(w.ix.XBackends) > 0 // CA bundles, client certificates
		ok := store(w.ix.Secrets, nn, c.Object, deleted)
		u.refs[backendtls.Ref{Kind: KindSecret, Name: nn}] = true
		u.gateways = u.gateways || w.gateway.any() // listener certificates
		return ok
	case KindFetchedCRL:
		// Keyed by URL alone: it has no namespace.
		u.xbackends = u.xbackends || len(w.ix.XBackends) > 0
		u.crls[c.Key.Name] = true
		return store(w.ix.FetchedCRLs, c.Key.Name, c.Object, deleted)
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
	case KindXBackendTrafficPolicy:
		// What it reaches is found by judging them all again (retraffic.go).
		p, ok := typed[*gwxv1a1.XBackendTrafficPolicy](c.Object, deleted)
		w.traffic.set(nn, p)
		return ok
	case KindXMesh:
		// Statuses only: judged again after the output (xmeshes.go).
		return store(w.xmeshes, c.Key, c.Object, deleted)
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
	if rk, ok := input.RouteKindOf(c.Kind); ok && rk.Streams() {
		return w.applyStreamRoute(rk, c, nn, deleted, u)
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

// applyGRPCRoute stores a GRPCRoute change, patched into the last run of
// the Gateway rules as an HTTPRoute's is, and translates again the
// Services whose ports it starts or stops naming: they gain or lose their
// HTTP/2 cluster.
func (w *world) applyGRPCRoute(c Change, nn types.NamespacedName, deleted bool, u *update) bool {
	r, ok := typed[*gwv1.GRPCRoute](c.Object, deleted)
	if !ok {
		return false
	}
	u.grpcRoutes[nn] = true
	var flipped []input.ServicePort
	if old := w.gateway.grpcRoutes[nn]; old != nil {
		flipped = append(flipped, w.ix.GRPCBackends.Add(input.GRPCRouteBackends(old), -1)...)
	}
	if r != nil {
		flipped = append(flipped, w.ix.GRPCBackends.Add(input.GRPCRouteBackends(r), 1)...)
	}
	for _, sp := range flipped {
		u.services[sp.Service] = true
	}
	setOrDelete(w.gateway.grpcRoutes, nn, r, deleted)
	return true
}

// applyStreamRoute stores a change to a stream route (rk.Streams: TLS,
// TCP, UDP): the Gateway rules run whole (stream routes have no route
// table to patch), and the Services whose ports it starts or stops naming
// (counted in rk.Backends) are translated again: they gain or lose their
// raw or UDP cluster.
func (w *world) applyStreamRoute(rk input.RouteKind, c Change, nn types.NamespacedName, deleted bool, u *update) bool {
	if !deleted && reflect.TypeOf(c.Object) != reflect.TypeOf(rk.New()) {
		return false
	}
	routes, counts := w.gateway.streams[rk.Kind()], rk.Backends(w.ix) // newGatewayObjects made a map per stream kind
	u.gateways = true
	var flipped []input.ServicePort
	if old, found := routes[nn]; found {
		flipped = append(flipped, counts.Add(rk.BackendPorts(old), -1)...)
	}
	if !deleted {
		flipped = append(flipped, counts.Add(rk.BackendPorts(c.Object), 1)...)
	}
	for _, sp := range flipped {
		u.services[sp.Service] = true
	}
	setOrDelete(routes, nn, c.Object, deleted)
	return true
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
		if keys.Len() == 0 {
			delete(w.ix.SlicesByService, svc)
			continue
		}
		list := make([]*discoveryv1.EndpointSlice, 0, keys.Len())
		for _, key := range input.SortedSeq(keys.All()) {
			list = append(list, w.slices[key])
		}
		w.ix.SlicesByService[svc] = list
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
