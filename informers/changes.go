package informers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/pipeline"
	"github.com/tlsplane/tlsplane/translator"
)

var _ pipeline.ChangeSource = (*Source)(nil)

// changeLog is what the event handlers saw since the pipeline last asked,
// one entry per object (the latest wins), in the order first seen. It is
// guarded by Source.mu.
type changeLog struct {
	// asked: the pipeline has had its first (whole) view.
	asked   bool
	order   []changeKey
	pending map[changeKey]metav1.Object
}

type changeKey struct {
	kind translator.Kind
	key  types.NamespacedName
}

// record notes obj (nil: deleted) as the current state of kind/key.
func (l *changeLog) record(kind translator.Kind, key types.NamespacedName, obj metav1.Object) {
	if !l.asked {
		return // the first view is read whole
	}
	k := changeKey{kind, key}
	if l.pending == nil {
		l.pending = map[changeKey]metav1.Object{}
	}
	if _, seen := l.pending[k]; !seen {
		l.order = append(l.order, k)
	}
	l.pending[k] = obj
}

// Changes returns the objects that changed since the last call, as the
// translator sees them: every policy, Service, EndpointSlice and Gateway
// API object, and the ConfigMaps and Secrets referred to (one newly
// referred to arrives as added, one no longer referred to as deleted).
// The first call returns Resync.
func (s *Source) Changes() translator.Changes {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := &s.changeLog
	if !l.asked {
		l.asked = true
		return translator.Changes{Resync: true}
	}
	out := translator.Changes{Objects: make([]translator.Change, 0, len(l.order))}
	for _, k := range l.order {
		out.Objects = append(out.Objects, translator.Change{Kind: k.kind, Key: k.key, Object: l.pending[k]})
	}
	l.order, l.pending = nil, nil
	return out
}

// recordEvent notes an add, update (both set) or delete (obj nil).
func (s *Source) recordEvent(kind string, old, obj any) {
	if obj != nil {
		if m, ok := obj.(metav1.Object); ok {
			s.changeLog.record(translator.Kind(kind), nameOfAny(m), m)
		}
		return
	}
	s.changeLog.record(translator.Kind(kind), nameOfAny(old), nil)
}

// recordRef records a ConfigMap or Secret that became referenced (its
// object now, translated from then on) or stopped being so (a deletion:
// no longer an input).
func (s *Source) recordRef(kind translator.Kind, nn types.NamespacedName) {
	var obj metav1.Object
	if s.refs.referenced(kind, nn) {
		if sc := s.scopeOf(nn.Namespace); sc != nil {
			var err error
			if kind == translator.KindConfigMap {
				obj, err = sc.configMaps.ConfigMaps(nn.Namespace).Get(nn.Name)
			} else {
				obj, err = sc.secrets.Secrets(nn.Namespace).Get(nn.Name)
			}
			if err != nil {
				obj = nil
			}
		}
	}
	s.changeLog.record(kind, nn, obj)
}
