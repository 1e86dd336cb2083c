package statuswriter

import (
	"bytes"
	"iter"
	"maps"
	"reflect"
	"unsafe"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
)

// LiveChanges is a Cache that also tells the writer when an object whose
// status it writes changes; *informers.Source is one. A change of nothing
// but the status (our own write coming back, or someone else's over ours)
// is translated by no one: the writer compares it with what it wants
// written at once, and writes ours back when they differ. Any other add or
// update is compared after the translation it causes, even one that
// changes no status (a policy deleted and created again as it was).
type LiveChanges interface {
	// NotifyStatusChanges has changed called, quickly and never
	// concurrently, with each add or update of an object of a kind whose
	// status the writer writes, kind named as Kind names it; statusOnly
	// when nothing but its status (and bookkeeping) changed.
	NotifyStatusChanges(changed func(kind string, nn types.NamespacedName, statusOnly bool))
}

// liveChanged is the writer's LiveChanges callback.
func (w *Writer) liveChanged(kind string, nn types.NamespacedName, statusOnly bool) {
	o := Object{Kind(kind), nn}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queue == nil {
		return // a term starts by comparing everything
	}
	if statusOnly {
		// Paced like a retry: another controller that keeps writing over
		// our entries cannot make us write at the client's full rate.
		if w.cachedDiffers(o) {
			w.queue.AddRateLimited(o)
		}
		return
	}
	w.recheck[o] = true
}

// queueIfDiffers queues o when its cached copy's status differs from the
// desired one; w.mu is held and w.queue set.
func (w *Writer) queueIfDiffers(o Object) {
	if w.cachedDiffers(o) {
		w.queue.Add(o)
	}
}

// recheckReported queues, among the objects to compare again after a
// report, those of the report just made (Gateway API kinds or not) that
// differ; w.mu is held and w.queue set.
func (w *Writer) recheckReported(gatewayAPI bool) {
	for o := range w.recheck {
		if (o.Kind != KindBackendTLSPolicy) == gatewayAPI {
			delete(w.recheck, o)
			w.queueIfDiffers(o)
		}
	}
}

// diffStatuses calls changed with each key of next whose status is not the
// very value it had in prev, and gone (when set) with each key of prev not
// in next. The translator hands back the same map when no status changed,
// and in a new map the statuses it did not redo as the same values (the
// same slices): a pass costs what changed, plus one map walk when
// something did. changed may name a status that is equal but rebuilt: the
// compare with the live object decides.
func diffStatuses[K comparable, V any](prev, next map[K]V, changed, gone func(K)) {
	if sameMap(prev, next) {
		return
	}
	diffSets[K, V](mapSet[K, V](prev), mapSet[K, V](next), changed, gone)
}

// diffRoutes is diffStatuses of one route kind's statuses.
func diffRoutes(prev, next translator.RouteStatuses, changed, gone func(types.NamespacedName)) {
	if prev.Same(next) {
		return
	}
	diffSets(prev, next, changed, gone)
}

// statusSet is one kind's statuses as diffSets reads them.
type statusSet[K comparable, V any] interface {
	Len() int
	Get(K) (V, bool)
	All() iter.Seq2[K, V]
}

// diffSets is diffStatuses of two sets known not to be the same map.
func diffSets[K comparable, V any](prev, next statusSet[K, V], changed, gone func(K)) {
	kept := 0
	for k, v := range next.All() {
		old, ok := prev.Get(k)
		if ok {
			kept++
		}
		if !ok || !sameValue(old, v) {
			changed(k)
		}
	}
	if gone == nil || kept == prev.Len() {
		return
	}
	for k := range prev.All() {
		if _, ok := next.Get(k); !ok {
			gone(k)
		}
	}
}

// mapSet is a map as a statusSet.
type mapSet[K comparable, V any] map[K]V

func (m mapSet[K, V]) Len() int { return len(m) }

func (m mapSet[K, V]) Get(k K) (V, bool) {
	v, ok := m[k]
	return v, ok
}

func (m mapSet[K, V]) All() iter.Seq2[K, V] { return maps.All(m) }

// sameMap reports whether a and b are one map (or both nil).
func sameMap[K comparable, V any](a, b map[K]V) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// sameValue reports whether a and b hold the same bytes: for a status,
// the same slices (arrays and lengths), so equal without walking them.
// false says nothing.
func sameValue[V any](a, b V) bool {
	n := unsafe.Sizeof(a)
	return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&a)), n), unsafe.Slice((*byte)(unsafe.Pointer(&b)), n))
}
