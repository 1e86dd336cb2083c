package main

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/condition"
	"github.com/tlsplane/tlsplane/translator/input"
)

// exitRefused is translate's exit code when it printed the translation
// but refused something: an object whose status says so, or a fleet the
// publisher's checks refuse. 1 stays "could not translate", 2 usage.
const exitRefused = 3

// refusedError lists what a translation refused, one line per object
// (and per fleet the publisher refused).
type refusedError struct{ lines []string }

func (e *refusedError) exitCode() int { return exitRefused }

func (e *refusedError) Error() string {
	return fmt.Sprintf("refused %d:\n  %s", len(e.lines), strings.Join(e.lines, "\n  "))
}

// refusedConditions are the condition types whose False means refused.
var refusedConditions = map[string]bool{
	string(gwv1.GatewayConditionAccepted):     true,
	string(gwv1.GatewayConditionProgrammed):   true,
	string(gwv1.GatewayConditionResolvedRefs): true,
}

// statusRefusal is one False condition of refusedConditions on an object
// of ours, or a fleet refusal its statuses do not show (Kind empty).
type statusRefusal struct {
	Kind      string
	Object    types.NamespacedName // Namespace empty for a cluster-scoped object
	Part      string               // which ancestor, listener or parent: "ancestor Gateway edge"
	Field     string               // the condition's place in the status: status.parents[Gateway edge].conditions[Accepted]
	Condition metav1.Condition
	Fleet     string // a fleet refusal's own words, when Kind is empty
}

// line is the refusal as translate prints it on stderr.
func (r statusRefusal) line() string {
	if r.Kind == "" {
		return r.Fleet
	}
	what := r.Kind + " " + objectName(r.Object)
	switch {
	case strings.HasPrefix(r.Part, "listener "):
		what += " " + r.Part
	case r.Part != "":
		what += " (" + r.Part + ")"
	}
	c := r.Condition
	return fmt.Sprintf("%s: %s=False (%s): %s", what, c.Type, c.Reason, c.Message)
}

// objectName is ns/name, or name for a cluster-scoped object.
func objectName(nn types.NamespacedName) string {
	if nn.Namespace == "" {
		return nn.Name
	}
	return nn.String()
}

// refused lists, sorted by kind then name, each object of ours whose
// status refuses it and each fleet refusal the statuses do not show.
func refused(out translator.Output, fleetRefusals []translator.FleetRefusal, controller gwv1.GatewayController) []string {
	var lines []string
	for _, r := range statusRefusals(out, fleetRefusals, controller) {
		lines = append(lines, r.line())
	}
	return lines
}

// statusRefusals is refused's list, as data.
func statusRefusals(out translator.Output, fleetRefusals []translator.FleetRefusal, controller gwv1.GatewayController) []statusRefusal {
	var list []statusRefusal
	add := func(kind string, nn types.NamespacedName, part, field string, conds []metav1.Condition) {
		for _, c := range conds {
			if refusedConditions[c.Type] && c.Status == metav1.ConditionFalse {
				list = append(list, statusRefusal{Kind: kind, Object: nn, Part: part, Field: fmt.Sprintf("%s.conditions[%s]", field, c.Type), Condition: c})
			}
		}
	}
	ancestors := func(kind string, nn types.NamespacedName, st gwv1.PolicyStatus) {
		for _, a := range condition.OurAncestors(st, controller) {
			ref := kindOf(a.AncestorRef) + " " + string(a.AncestorRef.Name)
			add(kind, nn, "ancestor "+ref, "status.ancestors["+ref+"]", a.Conditions)
		}
	}
	for _, nn := range sorted(out.Statuses) {
		ancestors("BackendTLSPolicy", nn, out.Statuses[nn])
	}
	st := out.GatewayAPI
	for _, nn := range sorted(st.XBackendTrafficPolicies) {
		ancestors("XBackendTrafficPolicy", nn, st.XBackendTrafficPolicies[nn])
	}
	for _, name := range input.SortedNames(st.GatewayClasses) {
		add("GatewayClass", types.NamespacedName{Name: name}, "", "status", st.GatewayClasses[name].Conditions)
	}
	for _, name := range input.SortedNames(st.XMeshes) {
		add("XMesh", types.NamespacedName{Name: name}, "", "status", st.XMeshes[name].Conditions)
	}
	for _, nn := range sorted(st.Gateways) {
		add("Gateway", nn, "", "status", st.Gateways[nn].Conditions)
		for _, l := range st.Gateways[nn].Listeners {
			add("Gateway", nn, "listener "+string(l.Name), "status.listeners["+string(l.Name)+"]", l.Conditions)
		}
	}
	for _, nn := range sorted(st.ListenerSets) {
		add("ListenerSet", nn, "", "status", st.ListenerSets[nn].Conditions)
		for _, l := range st.ListenerSets[nn].Listeners {
			add("ListenerSet", nn, "listener "+string(l.Name), "status.listeners["+string(l.Name)+"]", l.Conditions)
		}
	}
	for _, rk := range translator.RouteKinds {
		routes := translator.RouteStatusesOf(st, rk.Kind())
		for _, nn := range routes.SortedKeys() {
			route, _ := routes.Get(nn)
			for _, p := range condition.OurParents(route, controller) {
				ref := kindOf(p.ParentRef) + " " + string(p.ParentRef.Name)
				add(string(rk.Kind()), nn, "parent "+ref, "status.parents["+ref+"]", p.Conditions)
			}
		}
	}
	for _, r := range fleetRefusals {
		// A Gateway fleet's refusal is on its Gateway's Programmed
		// (listed above); the shared resources' are said here.
		if gw, ok := translator.GatewayOfFleet(r.Fleet); !ok || !hasKey(st.Gateways, gw) {
			list = append(list, statusRefusal{Fleet: r.String()})
		}
	}
	return list
}

func kindOf(r gwv1.ParentReference) string {
	if r.Kind != nil {
		return string(*r.Kind)
	}
	return "Gateway"
}

func sorted[V any](m map[types.NamespacedName]V) []types.NamespacedName { return input.SortedKeys(m) }

func hasKey[V any](m map[types.NamespacedName]V, k types.NamespacedName) bool {
	_, ok := m[k]
	return ok
}
