package translator_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
)

// TestUpdateMatchesTranslate: after every step of random sequences of
// edits, deletions and re-creations drawn from every golden input, a
// Translator's Update equals a fresh Translate of the same objects, and
// every resource its Changed does not name is the very pointer of the
// Output before.
func TestUpdateMatchesTranslate(t *testing.T) {
	pool := goldenPool(t, true)
	opts := translator.Options{AllowInsecureSkipVerify: true}
	for seed := range 60 {
		r := rand.New(rand.NewPCG(uint64(seed), 15))
		runUpdates(t, r, pool, opts, func(int) time.Time { return fuzzNow }, 25)
	}
}

// TestUpdateFollowsTheClock: CA expiry warnings appear and change as the
// clock moves. Left out: Gateways, and policies whose objects carry a
// status. A whole translation stamps their conditions afresh at every
// call (it starts from the object's status, which the directory source
// never updates), where Update keeps what it computed for an object that
// did not change; in a cluster the status writer updates the object,
// which makes it a change.
func TestUpdateFollowsTheClock(t *testing.T) {
	var pool []poolObject
	for _, o := range goldenPool(t, false) {
		if p, ok := o.obj.(*gwv1.BackendTLSPolicy); !ok || len(p.Status.Ancestors) == 0 {
			pool = append(pool, o)
		}
	}
	for seed := range 20 {
		r := rand.New(rand.NewPCG(uint64(seed), 16))
		opts := translator.Options{AllowInsecureSkipVerify: true, CAExpiryWarning: time.Duration(1+r.IntN(5000)) * 24 * time.Hour}
		runUpdates(t, r, pool, opts, func(step int) time.Time { return fuzzNow.Add(time.Duration(step) * 300 * 24 * time.Hour) }, 30)
	}
}

// poolObject is one input object with what a Change needs.
type poolObject struct {
	kind translator.Kind
	key  types.NamespacedName
	obj  metav1.Object
}

type poolKey struct {
	kind translator.Kind
	key  types.NamespacedName
}

func goldenPool(t *testing.T, gateways bool) []poolObject {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(goldenDir, "*.in.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	var pool []poolObject
	add := func(kind translator.Kind, o metav1.Object) {
		pool = append(pool, poolObject{kind, types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}, o})
	}
	for _, path := range paths {
		in, err := manifests.Unadmitted.Read([]string{path}, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		eachInput(in, gateways, add)
	}
	return pool
}

func eachInput(in translator.Inputs, gateways bool, fn func(translator.Kind, metav1.Object)) {
	for _, o := range in.Policies {
		fn(translator.KindBackendTLSPolicy, o)
	}
	for _, o := range in.Services {
		fn(translator.KindService, o)
	}
	for _, o := range in.EndpointSlices {
		fn(translator.KindEndpointSlice, o)
	}
	for _, o := range in.ConfigMaps {
		fn(translator.KindConfigMap, o)
	}
	for _, o := range in.Secrets {
		fn(translator.KindSecret, o)
	}
	if !gateways {
		return
	}
	for _, o := range in.GatewayClasses {
		fn(translator.KindGatewayClass, o)
	}
	for _, o := range in.Gateways {
		fn(translator.KindGateway, o)
	}
	for _, o := range in.HTTPRoutes {
		fn(translator.KindHTTPRoute, o)
	}
	for _, o := range in.GRPCRoutes {
		fn(translator.KindGRPCRoute, o)
	}
	for _, o := range in.TLSRoutes {
		fn(translator.KindTLSRoute, o)
	}
	for _, o := range in.TCPRoutes {
		fn(translator.KindTCPRoute, o)
	}
	for _, o := range in.ListenerSets {
		fn(translator.KindListenerSet, o)
	}
	for _, o := range in.UDPRoutes {
		fn(translator.KindUDPRoute, o)
	}
	for _, o := range in.ReferenceGrants {
		fn(translator.KindReferenceGrant, o)
	}
	for _, o := range in.Namespaces {
		fn(translator.KindNamespace, o)
	}
	for _, o := range in.XBackendTrafficPolicies {
		fn(translator.KindXBackendTrafficPolicy, o)
	}
	for _, o := range in.XBackends {
		fn(translator.KindXBackend, o)
	}
	for _, o := range in.XMeshes {
		fn(translator.KindXMesh, o)
	}
}

// runUpdates starts a Translator from a random half of the pool, then
// applies steps random batches of changes, checking each Update.
func runUpdates(t *testing.T, r *rand.Rand, pool []poolObject, opts translator.Options, clock func(step int) time.Time, steps int) {
	t.Helper()
	state := map[poolKey]poolObject{}
	for _, o := range pool {
		if r.IntN(2) == 0 {
			state[poolKey{o.kind, o.key}] = o
		}
	}
	tr := translator.New()
	last := tr.Translate(inputsOf(state), nil, clock(0), opts)
	if r.IntN(2) == 0 {
		tr.Prepare() // the pipeline's way; the first Update builds it otherwise
	}
	// A publisher patched with every Update, against one publishing each
	// whole translation afresh: their feeds must hold the same.
	// Both scopes: each fleet's share is patched as the whole is.
	scope := snapshots.ScopeReached
	if r.IntN(3) == 0 {
		scope = snapshots.ScopeAll
	}
	patched := newFeeds(t, scope)
	if _, err := patched.pub.Publish(last); err != nil {
		t.Fatalf("first publish: %v", err)
	}
	for step := 1; step <= steps; step++ {
		var changes []translator.Change
		for range 1 + r.IntN(4) {
			changes = append(changes, randomChange(r, pool, state, step))
		}
		now := clock(step)
		computed := translator.PreviousStatus(last.Statuses)
		got, ok := tr.Update(changes, computed, now, opts)
		if !ok {
			t.Fatalf("step %d: Update refused %d changes", step, len(changes))
		}
		want := translator.Translate(inputsOf(state), previousOf(state, computed), now, opts)
		if diff := fuzzOutputDifference(want, got); diff != "" {
			for k, st := range want.Statuses {
				if !reflect.DeepEqual(st, got.Statuses[k]) {
					t.Logf("%s:\nwant %+v\n got %+v", k, st, got.Statuses[k])
				}
			}
			t.Fatalf("step %d (%s): Update differs from Translate: %s", step, describe(changes), diff)
		}
		if !maps.Equal(want.ClusterNamespaces, got.ClusterNamespaces) || !maps.EqualFunc(want.CANotAfter, got.CANotAfter, time.Time.Equal) {
			t.Fatalf("step %d (%s): cluster namespaces or CA expiries differ", step, describe(changes))
		}
		checkChanged(t, step, last, got)
		checkReachedCovers(t, got)
		fresh := newFeeds(t, scope)
		_, wantErr := fresh.pub.Publish(want)
		if _, err := patched.pub.Publish(got); (err == nil) != (wantErr == nil) {
			t.Fatalf("step %d (%s): patched publish: %v, whole publish: %v", step, describe(changes), err, wantErr)
		}
		if wantErr == nil {
			if diff := patched.difference(fresh); diff != "" {
				t.Fatalf("step %d (%s): the patched publisher serves otherwise than a fresh one: %s", step, describe(changes), diff)
			}
			patched.checkScopes(t, step, got)
		}
		last = got
	}
}

// checkChanged: what Changed does not name is the same pointer as before.
func checkChanged(t *testing.T, step int, before, after translator.Output) {
	t.Helper()
	c := after.Changed
	if c == nil || c.Since != before.Generation || after.Generation <= before.Generation {
		t.Fatalf("step %d: Changed %+v, generations %d then %d", step, c, before.Generation, after.Generation)
	}
	samePointers(t, step, "cluster", before.Clusters, after.Clusters, c.Clusters, func(x interface{ GetName() string }) string { return x.GetName() })
	samePointers(t, step, "load assignment", before.Endpoints, after.Endpoints, c.Endpoints, func(x interface{ GetClusterName() string }) string { return x.GetClusterName() })
	samePointers(t, step, "secret", before.Secrets, after.Secrets, c.Secrets, func(x interface{ GetName() string }) string { return x.GetName() })
	for name, fleet := range after.Fleets {
		if before.Fleets[name] != fleet && !slices.Contains(c.Fleets, name) {
			t.Fatalf("step %d: fleet %s changed but is not named", step, name)
		}
	}
}

func samePointers[T comparable, N any](t *testing.T, step int, what string, before, after []T, named []string, nameOf func(N) string) {
	t.Helper()
	old := map[string]T{}
	for _, x := range before {
		old[nameOf(any(x).(N))] = x
	}
	now := map[string]bool{}
	for _, x := range after {
		name := nameOf(any(x).(N))
		now[name] = true
		if old[name] != x && !slices.Contains(named, name) {
			t.Fatalf("step %d: %s %s changed but is not named in Changed", step, what, name)
		}
	}
	for name := range old {
		if !now[name] && !slices.Contains(named, name) {
			t.Fatalf("step %d: %s %s removed but is not named in Changed", step, what, name)
		}
	}
}

// randomChange deletes, re-creates (the pool's own pointer) or edits one
// object, and applies the change to state.
func randomChange(r *rand.Rand, pool []poolObject, state map[poolKey]poolObject, step int) translator.Change {
	o := pool[r.IntN(len(pool))]
	k := poolKey{o.kind, o.key}
	if _, present := state[k]; present && r.IntN(3) == 0 {
		delete(state, k)
		return translator.Change{Kind: o.kind, Key: o.key}
	}
	if r.IntN(3) > 0 {
		o.obj = edited(r, o.obj, pool, step)
	}
	state[k] = o
	return translator.Change{Kind: o.kind, Key: o.key, Object: o.obj}
}

// edited is a copy of o with something that matters changed (or, for
// kinds without an edit here, the same content as a new object).
func edited(r *rand.Rand, o metav1.Object, pool []poolObject, step int) metav1.Object {
	switch o := o.(type) {
	case *corev1.Service:
		c := o.DeepCopy()
		if len(c.Spec.Ports) > 0 && r.IntN(2) == 0 {
			c.Spec.Ports[0].Port += int32(1 + r.IntN(2))
		} else if len(c.Spec.Ports) > 1 {
			c.Spec.Ports = c.Spec.Ports[1:]
		}
		return c
	case *discoveryv1.EndpointSlice:
		c := o.DeepCopy()
		if len(c.Endpoints) > 0 && len(c.Endpoints[0].Addresses) > 0 {
			c.Endpoints[0].Addresses[0] = "10.9.8." + strconv.Itoa(step%250)
		}
		return c
	case *corev1.ConfigMap:
		c := o.DeepCopy()
		for _, other := range pool {
			if cm, ok := other.obj.(*corev1.ConfigMap); ok && r.IntN(3) == 0 {
				c.Data = cm.Data
				break
			}
		}
		return c
	case *gwv1.BackendTLSPolicy:
		c := o.DeepCopy()
		switch r.IntN(3) {
		case 0:
			c.Spec.Validation.Hostname = gwv1.PreciseHostname("edited-" + strconv.Itoa(step) + ".example")
		case 1:
			if len(c.Spec.TargetRefs) > 1 {
				c.Spec.TargetRefs = c.Spec.TargetRefs[1:]
			}
		default:
			c.CreationTimestamp = metav1.NewTime(time.Date(2020, 1, 1, 0, 0, r.IntN(3), 0, time.UTC))
		}
		return c
	case *gwv1.HTTPRoute:
		return editedRoute(r, o, pool, step)
	case *gwxv1a1.XBackendTrafficPolicy:
		return editedTrafficPolicy(r, o, step)
	case *gwxv1a1.XBackend:
		return editedXBackend(r, o, step)
	case *gwv1.ListenerSet:
		// Precedence among sets, or a listener's hostname (conflicts).
		c := o.DeepCopy()
		if r.IntN(2) == 0 || len(c.Spec.Listeners) == 0 {
			c.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1+r.IntN(3), 0, 0, 0, 0, time.UTC))
		} else {
			h := gwv1.Hostname([]string{"a.example", "b.example", "gw.example"}[r.IntN(3)])
			c.Spec.Listeners[0].Hostname = &h
		}
		return c
	}
	if c, ok := any(o).(runtime.Object); ok {
		return c.DeepCopyObject().(metav1.Object)
	}
	return o
}

func inputsOf(state map[poolKey]poolObject) translator.Inputs {
	var in translator.Inputs
	for _, k := range sortedPoolKeys(state) {
		in.Add(state[k].obj)
	}
	return in
}

func sortedPoolKeys(state map[poolKey]poolObject) []poolKey {
	keys := slices.Collect(maps.Keys(state))
	slices.SortFunc(keys, func(a, b poolKey) int {
		if a.kind != b.kind {
			return compareStrings(string(a.kind), string(b.kind))
		}
		return compareStrings(a.key.String(), b.key.String())
	})
	return keys
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// previousOf is the pipeline's rule: a policy's own status when it has
// ancestors, else what was computed last.
func previousOf(state map[poolKey]poolObject, computed translator.PreviousStatus) translator.PreviousStatus {
	prev := translator.PreviousStatus{}
	for _, o := range state {
		p, ok := o.obj.(*gwv1.BackendTLSPolicy)
		if !ok {
			continue
		}
		key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
		if key.Namespace == "" {
			key.Namespace = "default"
		}
		if len(p.Status.Ancestors) > 0 {
			prev[key] = p.Status
		} else if st, ok := computed[key]; ok {
			prev[key] = st
		}
	}
	return prev
}

func describe(changes []translator.Change) string {
	var s string
	for i, c := range changes {
		if i > 0 {
			s += ", "
		}
		verb := "set"
		if c.Object == nil {
			verb = "delete"
		}
		s += verb + " " + string(c.Kind) + " " + c.Key.String()
	}
	return s
}

// feeds is a Publisher with a stream open for an unrestricted fleet, a
// namespace-restricted one and every Gateway fleet of the golden inputs.
type feeds struct {
	pub    *snapshots.Publisher
	fleets []string
	scope  snapshots.FleetScope
}

func newFeeds(t *testing.T, scope snapshots.FleetScope) feeds {
	f := feeds{
		scope:  scope,
		pub:    snapshots.New(snapshots.Options{Scope: scope, FleetNamespaces: map[string][]string{"shop-only": {"shop"}}}),
		fleets: []string{"mesh", "shop-only", "shop/edge", "web/edge", "infra/edge", "edge/by-spec", "shop/ours"},
	}
	for _, fleet := range f.fleets {
		f.pub.NodeStreamOpened(&corev3.Node{Id: fleet, Cluster: fleet})
	}
	return f
}

// difference compares what each fleet's feed serves: type versions, and
// every resource's name and version.
func (f feeds) difference(other feeds) string {
	for _, fleet := range f.fleets {
		for _, typeURL := range snapshots.ServedTypes() {
			a, b := served(f.pub.Feed(fleet), typeURL), served(other.pub.Feed(fleet), typeURL)
			if !maps.Equal(a, b) {
				return fmt.Sprintf("fleet %s, %s: %d entries vs %d (%v vs %v)", fleet, typeURL, len(a), len(b), a, b)
			}
		}
	}
	return ""
}

func served(feed *snapshots.Feed, typeURL string) map[string]string {
	out := map[string]string{}
	feed.Read(typeURL, func(v snapshots.FeedView) {
		out[""] = v.Version
		v.Each(func(e *snapshots.FeedEntry) { out[e.Name] = e.Version })
	})
	return out
}

// editedRoute changes what a route's virtual hosts, attachments or
// backends depend on: a hostname (often another route's), a path, a
// backend, a parentRef, or its age (its precedence among equal matches).
func editedRoute(r *rand.Rand, o *gwv1.HTTPRoute, pool []poolObject, step int) *gwv1.HTTPRoute {
	c := o.DeepCopy()
	var others []*gwv1.HTTPRoute
	for _, p := range pool {
		if other, ok := p.obj.(*gwv1.HTTPRoute); ok {
			others = append(others, other)
		}
	}
	other := others[r.IntN(len(others))]
	switch r.IntN(6) {
	case 0:
		c.Spec.Hostnames = slices.Clone(other.Spec.Hostnames)
	case 1:
		c.Spec.Hostnames = append(c.Spec.Hostnames, gwv1.Hostname("edited-"+strconv.Itoa(step%3)+".example.com"))
	case 2:
		for i := range c.Spec.Rules {
			for j := range c.Spec.Rules[i].Matches {
				path := "/edited/" + strconv.Itoa(step%4)
				c.Spec.Rules[i].Matches[j].Path = &gwv1.HTTPPathMatch{Type: ptr(gwv1.PathMatchPathPrefix), Value: &path}
			}
		}
	case 3:
		if len(other.Spec.Rules) > 0 {
			c.Spec.Rules = append(c.Spec.Rules, *other.Spec.Rules[0].DeepCopy())
		}
	case 4:
		if len(c.Spec.ParentRefs) > 1 {
			c.Spec.ParentRefs = c.Spec.ParentRefs[1:]
		} else {
			c.Spec.ParentRefs = slices.Clone(other.Spec.ParentRefs)
		}
	default:
		c.CreationTimestamp = metav1.NewTime(time.Date(2020, 1, 1, 0, 0, r.IntN(3), 0, time.UTC))
	}
	return c
}

// editedTrafficPolicy changes what an XBackendTrafficPolicy asks (budget,
// session kind), what it targets (a Service or an XBackend), or its age
// (who wins a conflict).
func editedTrafficPolicy(r *rand.Rand, o *gwxv1a1.XBackendTrafficPolicy, step int) *gwxv1a1.XBackendTrafficPolicy {
	c := o.DeepCopy()
	switch r.IntN(4) {
	case 0:
		percent := []int{5, 50, 150}[r.IntN(3)] // 150: Invalid
		c.Spec.RetryConstraint = &gwxv1a1.RetryConstraint{Budget: &gwxv1a1.BudgetDetails{Percent: &percent}}
	case 1:
		kind := []gwv1.SessionPersistenceType{gwv1.CookieBasedSessionPersistence, gwv1.HeaderBasedSessionPersistence}[r.IntN(2)]
		name := "s" + strconv.Itoa(step%3)
		c.Spec.SessionPersistence = &gwv1.SessionPersistence{Type: &kind, SessionName: &name}
	case 2:
		// Services and XBackends (web is both: two targets), some missing.
		targets := []gwv1.LocalPolicyTargetReference{
			{Kind: "Service", Name: "api"}, {Kind: "Service", Name: "web"}, {Kind: "Service", Name: "gone"},
			{Group: gwxv1a1.GroupName, Kind: "XBackend", Name: "pay"}, {Group: gwxv1a1.GroupName, Kind: "XBackend", Name: "payments"},
			{Group: gwxv1a1.GroupName, Kind: "XBackend", Name: "web"}, {Group: gwxv1a1.GroupName, Kind: "XBackend", Name: "ghost"},
		}
		c.Spec.TargetRefs = []gwv1.LocalPolicyTargetReference{targets[r.IntN(len(targets))]}
	default:
		c.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1+r.IntN(3), 0, 0, 0, 0, time.UTC))
	}
	return c
}

// editedXBackend is a copy of o with its port, protocol, TLS mode, CA
// references or hostname changed: what routes, clusters and secrets read.
func editedXBackend(r *rand.Rand, o *gwxv1a1.XBackend, step int) *gwxv1a1.XBackend {
	c := o.DeepCopy()
	switch r.IntN(5) {
	case 0:
		c.Spec.Port.Port = gwxv1a1.PortNumber([]int{443, 8443, 5432}[r.IntN(3)])
	case 1:
		p := []gwxv1a1.BackendProtocol{gwxv1a1.BackendProtocolHTTP, gwxv1a1.BackendProtocolHTTP2, gwxv1a1.BackendProtocolTCP, gwxv1a1.BackendProtocolH2C}[r.IntN(4)]
		c.Spec.Protocol = &p
	case 2:
		if c.Spec.TLS == nil {
			c.Spec.TLS = &gwxv1a1.BackendTLS{Mode: gwxv1a1.BackendTLSModeServerOnly}
		} else {
			c.Spec.TLS = nil
		}
	case 3:
		if c.Spec.TLS != nil {
			name := []string{"payments-ca", "partner-ca", "absent-ca"}[r.IntN(3)]
			c.Spec.TLS.Validation.CACertificateRefs = []gwv1.LocalObjectReference{{Kind: "ConfigMap", Name: gwv1.ObjectName(name)}}
		}
	default:
		if c.Spec.ExternalHostname != nil {
			c.Spec.ExternalHostname.Hostname = gwv1.PreciseHostname("edited-" + strconv.Itoa(step) + ".partner.example")
		}
	}
	return c
}

// objectsOf is every object of in by kind and name, as a pool of changes
// starts from.
func objectsOf(in translator.Inputs) map[poolKey]poolObject {
	state := map[poolKey]poolObject{}
	eachInput(in, true, func(kind translator.Kind, o metav1.Object) {
		k := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
		state[poolKey{kind, k}] = poolObject{kind, k, o}
	})
	return state
}
