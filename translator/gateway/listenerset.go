package gateway

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/gatewaytls"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// A ListenerSet (GEP-1713) adds listeners to the Gateway its parentRef
// names, when the Gateway's allowedListeners admits the set's namespace.
// The Gateway then serves the merged list: its own listeners first, then
// each attached set's, the oldest set first, then by namespace/name. A set
// listener that would conflict with one earlier in that list is not
// served (the earlier one wins); conflicts among a Gateway's own
// listeners keep their rule (markConflicts: no winner). Routes reach a
// set's listeners only through a parentRef to the set.

// listenerSet is one ListenerSet whose parentRef names a Gateway of ours,
// as judged.
type listenerSet struct {
	ls *gwv1.ListenerSet
	nn types.NamespacedName
	// notAttachedReason is why the Gateway does not take the set ("" when
	// it does): NotAllowed, ParentNotAccepted or ListenersNotValid.
	notAttachedReason, notAttachedMsg string
	listeners                         []*listenerState
}

// attached: the Gateway takes the set (it counts in attachedListenerSets
// and its served listeners are the Gateway's).
func (s *listenerSet) attached() bool { return s.notAttachedReason == "" }

// allListeners are the Gateway's own listeners, then those of its
// ListenerSets in precedence order.
func (gs *Gateway) allListeners() []*listenerState {
	if len(gs.sets) == 0 {
		return gs.listeners
	}
	out := slices.Clone(gs.listeners)
	for _, s := range gs.sets {
		out = append(out, s.listeners...)
	}
	return out
}

// set is the Gateway's ListenerSet nn; nil when it has none of that name.
func (gs *Gateway) set(nn types.NamespacedName) *listenerSet {
	for _, s := range gs.sets {
		if s.nn == nn {
			return s
		}
	}
	return nil
}

// chainName names the listener in Envoy (filter chains, route tables):
// ListenerSet listener names are unique only within their set.
func (l *listenerState) chainName() string {
	if l.set == nil {
		return plan.GatewayChainName(string(l.spec.Name))
	}
	return plan.ListenerSetChainName(l.set.nn.Namespace, l.set.nn.Name, string(l.spec.Name))
}

// indexListenerSets groups the ListenerSets by the Gateway their parentRef
// names, each group in precedence order, and records each set's parent.
func (g *gatewayIndex) indexListenerSets(sets []*gwv1.ListenerSet) {
	g.setsOf = map[types.NamespacedName][]*gwv1.ListenerSet{}
	g.setParents = map[types.NamespacedName]types.NamespacedName{}
	for _, s := range input.UniqueSorted(sets, func(o *gwv1.ListenerSet) types.NamespacedName { return input.NameOf(o.Namespace, o.Name) }) {
		ref := s.Spec.ParentRef
		if (ref.Group != nil && string(*ref.Group) != gwv1.GroupName) || (ref.Kind != nil && *ref.Kind != "Gateway") {
			continue
		}
		ns := s.Namespace
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		parent := types.NamespacedName{Namespace: ns, Name: string(ref.Name)}
		g.setsOf[parent] = append(g.setsOf[parent], s)
		g.setParents[input.NameOf(s.Namespace, s.Name)] = parent
	}
	for _, sets := range g.setsOf {
		slices.SortStableFunc(sets, func(a, b *gwv1.ListenerSet) int {
			if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
				return c
			}
			return strings.Compare(gatewayKey(input.NameOf(a.Namespace, a.Name)), gatewayKey(input.NameOf(b.Namespace, b.Name)))
		})
	}
}

// judgeListenerSets judges the ListenerSets naming gs as their parent, in
// precedence order: whether the Gateway admits each, its listeners, and
// their conflicts with the listeners before them.
func judgeListenerSets(gs *Gateway, ix *input.Index, g *gatewayIndex, secrets gatewaytls.Certificates) []*listenerSet {
	sets := g.setsOf[gs.nn]
	if len(sets) == 0 {
		return nil
	}
	claims := newPortClaims()
	for _, l := range gs.listeners {
		claims.claim(l)
	}
	parentAccepted := gs.acceptedCondition().Status == metav1.ConditionTrue
	out := make([]*listenerSet, 0, len(sets))
	for _, ls := range sets {
		s := &listenerSet{ls: ls, nn: input.NameOf(ls.Namespace, ls.Name)}
		out = append(out, s)
		if !g.admitsListenerSet(gs.gw, s.nn.Namespace) {
			s.notAttachedReason = string(gwv1.ListenerSetReasonNotAllowed)
			s.notAttachedMsg = fmt.Sprintf("Gateway %s: spec.allowedListeners does not admit ListenerSets of namespace %s", gatewayKey(gs.nn), s.nn.Namespace)
			continue
		}
		if !parentAccepted {
			s.notAttachedReason = string(gwv1.ListenerSetReasonParentNotAccepted)
			s.notAttachedMsg = fmt.Sprintf("Gateway %s is not accepted", gatewayKey(gs.nn))
			continue
		}
		owner := listenerOwner{kind: "ListenerSet", nn: s.nn}
		served := 0
		for i := range ls.Spec.Listeners {
			spec := gwv1.Listener(ls.Spec.Listeners[i])
			l := judgeListener(owner, &spec, ix, g, secrets, gs.frontend)
			l.set = s
			claims.settle(l)
			if l.served() {
				served++
			}
			s.listeners = append(s.listeners, l)
		}
		if served == 0 {
			s.notAttachedReason = string(gwv1.ListenerSetReasonListenersNotValid)
			s.notAttachedMsg = "no listener can be served; see status.listeners"
		}
	}
	return out
}

// admitsListenerSet applies the Gateway's spec.allowedListeners (None when
// unset) to a ListenerSet of namespace ns.
func (g *gatewayIndex) admitsListenerSet(gw *gwv1.Gateway, ns string) bool {
	al := gw.Spec.AllowedListeners
	if al == nil || al.Namespaces == nil || al.Namespaces.From == nil {
		return false
	}
	return g.admits(*al.Namespaces.From, al.Namespaces.Selector, gw.Namespace, ns)
}

// portClaims are the ports, protocols and hostnames taken by the
// listeners earlier in a Gateway's merged list.
type portClaims struct {
	protocols map[Socket]gwv1.ProtocolType
	hostnames map[string]bool
}

func newPortClaims() portClaims {
	return portClaims{protocols: map[Socket]gwv1.ProtocolType{}, hostnames: map[string]bool{}}
}

func (c portClaims) hostKey(l *listenerState) string {
	return fmt.Sprintf("%d/%s/%s", l.spec.Port, protocolClass(l.spec.Protocol), l.hostname)
}

// claim takes the listener's port, protocol and hostname.
func (c portClaims) claim(l *listenerState) {
	if !l.accepted {
		return
	}
	if _, ok := c.protocols[l.socket()]; !ok {
		c.protocols[l.socket()] = protocolClass(l.spec.Protocol)
	}
	c.hostnames[c.hostKey(l)] = true
}

// settle marks a ListenerSet listener conflicted when an earlier listener
// holds its socket (port, as UDP or TCP) with another protocol, or its
// port, protocol and hostname; otherwise it claims them.
func (c portClaims) settle(l *listenerState) {
	if !l.accepted {
		return
	}
	if p, ok := c.protocols[l.socket()]; ok && p != protocolClass(l.spec.Protocol) {
		l.conflictReason = string(gwv1.ListenerReasonProtocolConflict)
		l.conflictMsg = fmt.Sprintf("listener %s: port %d is taken by an earlier %s listener of the Gateway or its ListenerSets", l.spec.Name, l.spec.Port, p)
		return
	}
	if c.hostnames[c.hostKey(l)] {
		l.conflictReason = string(gwv1.ListenerReasonHostnameConflict)
		l.conflictMsg = fmt.Sprintf("listener %s: an earlier %s listener of the Gateway or its ListenerSets has port %d and hostname %q", l.spec.Name, l.spec.Protocol, l.spec.Port, l.hostname)
		return
	}
	c.claim(l)
}
