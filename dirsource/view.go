package dirsource

import (
	"cmp"
	"maps"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/input"
)

// objectKey names one object of the view: two files defining the same key
// define the same object, and only one of them is served.
type objectKey struct {
	kind translator.Kind
	types.NamespacedName
}

// kindOrder is the order of kinds in Changes: the order of Inputs' fields
// (input.ObjectKinds).
var kindOrder = func() map[translator.Kind]int {
	order := make(map[translator.Kind]int, len(input.ObjectKinds))
	for i, k := range input.ObjectKinds {
		order[k.Kind()] = i
	}
	return order
}()

func compareKeys(a, b objectKey) int {
	return cmp.Or(cmp.Compare(kindOrder[a.kind], kindOrder[b.kind]),
		cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// view is the objects served after duplicates are resolved, and which of
// them changed since Changes was last called. Run's goroutine writes it;
// the pipeline reads it from its own.
type view struct {
	mu      sync.Mutex
	objects map[objectKey]metav1.Object
	// pending are the keys whose object changed since the last Changes.
	pending map[objectKey]struct{}
	// asked is set once Changes was called: the first call is a Resync.
	asked bool
	// inputs is built from objects when asked for, and dropped on change;
	// generation counts changes, so a build that raced one is not kept.
	inputs     *translator.Inputs
	generation uint64
}

func newView() *view {
	return &view{objects: map[objectKey]metav1.Object{}, pending: map[objectKey]struct{}{}}
}

// set serves o for k (nil withdraws it) and reports whether that changed
// anything. Objects are compared as pointers: the source keeps a pointer
// for as long as the object it read stays the same.
func (v *view) set(updates map[objectKey]metav1.Object) (changed bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for k, o := range updates {
		if v.objects[k] == o {
			continue
		}
		if o == nil {
			delete(v.objects, k)
		} else {
			v.objects[k] = o
		}
		v.pending[k] = struct{}{}
		changed = true
	}
	if changed {
		v.inputs = nil
		v.generation++
	}
	return changed
}

// changes drains what changed since the last call, in key order.
func (v *view) changes() translator.Changes {
	v.mu.Lock()
	defer v.mu.Unlock()
	keys := slices.SortedFunc(maps.Keys(v.pending), compareKeys)
	if len(keys) > 64 {
		// A map keeps the buckets of its largest size, and iterating or
		// clearing it costs them: after the first read of 100,000 files
		// every later drain paid for 500,000 keys (3 ms an edit).
		v.pending = map[objectKey]struct{}{}
	} else {
		clear(v.pending)
	}
	if !v.asked {
		v.asked = true
		return translator.Changes{Resync: true}
	}
	out := translator.Changes{Objects: make([]translator.Change, 0, len(keys))}
	for _, k := range keys {
		out.Objects = append(out.Objects, translator.Change{Kind: k.kind, Key: k.NamespacedName, Object: v.objects[k]})
	}
	return out
}

// current returns the served objects as Inputs, each kind in key order;
// the value is shared by every caller until the next change. It is sorted
// outside the lock, so Run's reads do not wait for it.
func (v *view) current() translator.Inputs {
	v.mu.Lock()
	if v.inputs != nil {
		defer v.mu.Unlock()
		return *v.inputs
	}
	generation := v.generation
	objects := make([]keyed, 0, len(v.objects))
	for k, o := range v.objects {
		objects = append(objects, keyed{k, o})
	}
	v.mu.Unlock()

	in := buildInputs(objects)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.generation == generation {
		v.inputs = &in
	}
	return in
}

func buildInputs(objects []keyed) translator.Inputs {
	slices.SortFunc(objects, func(a, b keyed) int { return compareKeys(a.key, b.key) })
	var in translator.Inputs
	for _, k := range objects {
		in.Add(k.object)
	}
	return in
}
