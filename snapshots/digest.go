package snapshots

import (
	"fmt"
	"sync"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
)

// digest is what publishing needs to know of one resource: its name, its
// wire version (go-control-plane's hash of its deterministic bytes, but a
// route configuration's: routeversion.go) and, for a cluster, the SDS
// secrets it reads; for a listener, the routes and secrets it reads; for
// a route configuration, its bytes to come (behind pointers: a digest per
// cluster stays small).
type digest struct {
	name string
	wire string
	// element is the resource's term of a content sum (elementOf), made
	// once: every fleet that serves the resource adds it.
	element contentSum
	secrets []string
	// tls is a cluster's TLS parameters a build may refuse (envoycaps.go).
	tls      *clusterTLS
	listener *listenerRefs
	route    *routeWire
}

// digests memoises a digest per resource pointer. The translator hands back
// the same pointer for every resource whose inputs did not change, and
// nothing mutates a resource once translated, so a publish after one edit
// marshals, hashes and inspects only what changed. Digests of resources
// absent from two consecutive publishes are dropped, so memory follows
// the served set.
type digests struct {
	mu        sync.Mutex
	cur, prev map[types.Resource]*digest
	routes    *routeWires
}

func newDigests() *digests {
	return &digests{cur: map[types.Resource]*digest{}, routes: newRouteWires()}
}

// rotate starts a publish: what the previous one did not use is forgotten.
func (d *digests) rotate() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.prev, d.cur = d.cur, make(map[types.Resource]*digest, len(d.cur))
	d.routes.rotate()
}

// of returns r's digest, computing it only for a pointer not seen lately.
func (d *digests) of(r types.Resource) (*digest, error) {
	d.mu.Lock()
	if dg, ok := d.cur[r]; ok {
		d.mu.Unlock()
		return dg, nil
	}
	if dg, ok := d.prev[r]; ok {
		d.cur[r] = dg
		d.mu.Unlock()
		return dg, nil
	}
	d.mu.Unlock()

	dg, err := d.digestOf(r)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.cur[r] = dg
	d.mu.Unlock()
	return dg, nil
}

// forget drops r's digest: a patch replaced or removed r.
func (d *digests) forget(r types.Resource) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.cur, r)
	delete(d.prev, r)
}

func (d *digests) digestOf(r types.Resource) (*digest, error) {
	name := cache.GetResourceName(r)
	if rc, ok := r.(*routev3.RouteConfiguration); ok {
		version, wire, err := d.routes.version(rc)
		if err != nil {
			return nil, fmt.Errorf("resource %q: %w", name, err)
		}
		return &digest{name: name, wire: version, element: elementOf(name, version), route: wire}, nil
	}
	b, err := cache.MarshalResource(r)
	if err != nil {
		return nil, fmt.Errorf("resource %q: %w", name, err)
	}
	wire := cache.HashResource(b)
	dg := &digest{name: name, wire: wire, element: elementOf(name, wire)}
	switch r := r.(type) {
	case *clusterv3.Cluster:
		contexts, err := upstreamTLSContexts(r)
		if err != nil {
			return nil, err
		}
		dg.secrets, dg.tls = secretsOf(contexts), clusterTLSFrom(r, contexts)
	case *listenerv3.Listener:
		refs, err := referencesOf(r)
		if err != nil {
			return nil, err
		}
		dg.listener = &refs
	}
	return dg, nil
}
