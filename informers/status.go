package informers

import (
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// statusKinds are the kinds whose status the status writer writes: these
// and every route kind.
var statusKinds = func() map[string]bool {
	kinds := map[string]bool{kindPolicy: true, kindGatewayClass: true, kindGateway: true, kindListenerSet: true,
		kindXBackend: true, kindXBackendTrafficPolicy: true, kindXMesh: true}
	for _, rk := range translator.RouteKinds {
		kinds[string(rk.Kind())] = true
	}
	return kinds
}()

// NotifyStatusChanges has changed called with each add or update, after
// Synced, of a BackendTLSPolicy, GatewayClass, Gateway, ListenerSet,
// XBackend, XBackendTrafficPolicy, XMesh or route of every route kind (kind named so): statusOnly when nothing
// but its status changed, which signals no translation. It is called on
// the informers' event goroutine, never concurrently, and must return
// quickly; the cache holds the object it names already. Set it before Run.
func (s *Source) NotifyStatusChanges(changed func(kind string, nn types.NamespacedName, statusOnly bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statusChanged = changed
}

// notifyStatus tells NotifyStatusChanges's callback of obj; s.mu is held.
func (s *Source) notifyStatus(kind string, obj any, statusOnly bool) {
	if s.statusChanged != nil && statusKinds[kind] {
		s.statusChanged(kind, nameOfAny(obj), statusOnly)
	}
}

// statusUpdate is an update of a status kind that changed nothing but the
// status: mostly our own status write coming back, else someone else's
// write over ours, which the status writer compares with what it wants
// written and writes ours back. Neither needs a translation. The
// translator still gets the object with the next translation, since its
// status is where the translator's conditions keep their
// lastTransitionTime; except a policy's while it had no ancestors, as
// after our first write to it: the translator starts a policy without
// ancestors from its own last status, so the copy it holds (without
// ancestors, or the object's current one) stays right. A first sync of
// many policies thus adds nothing to the next translation. s.mu is held.
func (s *Source) statusUpdate(kind string, old, obj any) {
	s.metrics.events.WithLabelValues(kind, "status").Inc()
	if kind != kindPolicy || hasAncestors(old) {
		s.recordEvent(kind, old, obj)
	}
	s.notifyStatus(kind, obj, true)
}

func hasAncestors(obj any) bool {
	p, ok := obj.(*gwv1.BackendTLSPolicy)
	return ok && len(p.Status.Ancestors) > 0
}
