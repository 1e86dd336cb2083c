package translator

import (
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	t.rejudgeTraffic(u)
	t.rejudgeXBackends(u)
	t.reattach(u)
	t.retranslate(u)
	stamp := metav1.NewTime(now.UTC().Truncate(time.Second))
	if u.gateways || len(u.routes)+len(u.grpcRoutes) > 0 && !w.patchRoutes(u, stamp) {
		t.retranslateGateways(u, stamp)
	}
	w.notesDue(u, now)
	t.restatus(u, computed, now, stamp)
	xbackends := t.xbackendStatuses(u, stamp, now)
	t.generation++
	out = w.output(u, xbackends, t.generation, t.fleetEmitter())
	t.updateMesh(&out, stamp)
	t.restatusTraffic(&out, stamp)
	t.restatusXMeshes(&out, stamp)
	return out, true
}

// updateMesh plans and emits the mesh again from the world's objects
// and adds it to out (the world's Output never holds it): the mesh is
// not patched yet, so an Update costs the mesh's size while some
// namespace is in it, and nothing more otherwise. Fleets whose resources
// come out equal keep their pointers; the others are named changed.
func (t *Translator) updateMesh(out *Output, stamp metav1.Time) {
	w := t.world
	if len(t.mesh.fleets) == 0 && len(t.mesh.httpRoutes)+len(t.mesh.grpcRoutes) == 0 && !w.gateway.anyInMesh(t.opts.MeshNamespaces) {
		return
	}
	in := Inputs{HTTPRoutes: input.ValuesOf(w.gateway.routes), GRPCRoutes: input.ValuesOf(w.gateway.grpcRoutes), Namespaces: input.ValuesOf(w.gateway.namespaces)}
	next := t.translateMesh(in, w.ix, t.opts.MeshNamespaces, t.gatewayConfig.ControllerName, stamp)
	changed := next.keepUnchanged(t.mesh)
	t.mesh = next
	next.addMesh(out, t.gatewayConfig.ControllerName)
	if len(changed) > 0 {
		out.Changed.Fleets = append(out.Changed.Fleets, changed...)
		sort.Strings(out.Changed.Fleets)
	}
}

// Prepare builds now what the first Update after a whole translation
// would build (70-120 ms at 10,000 Services), so that Update is not the
// one an edit waits for. It does nothing when there is nothing to build.
func (t *Translator) Prepare() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.world == nil && t.whole != nil && !t.forget {
		t.world, t.whole = t.buildWorld(t.whole), nil
	}
}

// Forget drops what Update starts from, so the next call must be a whole
// Translate: for a caller that cannot vouch for the last call.
func (t *Translator) Forget() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.world, t.whole = nil, nil
}
