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

func (e *refusedError) Error() string {
	return fmt.Sprintf("refused %d:\n  %s", len(e.lines), strings.Join(e.lines, "\n  "))
}

// refusedConditions are the condition types whose False means refused.
var refusedConditions = map[string]bool{
	string(gwv1.GatewayConditionAccepted):     true,
	string(gwv1.GatewayConditionProgrammed):   true,
	string(gwv1.GatewayConditionResolvedRefs): true,
}

// refused lists, sorted by kind then name, each object of ours whose
// status refuses it and each fleet refusal the statuses do not show.
func refused(out translator.Output, fleetRefusals []translator.FleetRefusal, controller gwv1.GatewayController) []string {
	var lines []string
	add := func(what string, conds []metav1.Condition) {
		for _, c := range conds {
			if refusedConditions[c.Type] && c.Status == metav1.ConditionFalse {
				lines = append(lines, fmt.Sprintf("%s: %s=False (%s): %s", what, c.Type, c.Reason, c.Message))
			}
		}
	}
	for _, nn := range sorted(out.Statuses) {
		for _, a := range condition.OurAncestors(out.Statuses[nn], controller) {
			add(fmt.Sprintf("BackendTLSPolicy %s (ancestor %s %s)", nn, kindOf(a.AncestorRef), a.AncestorRef.Name), a.Conditions)
		}
	}
	st := out.GatewayAPI
	for _, nn := range sorted(st.XBackendTrafficPolicies) {
		for _, a := range condition.OurAncestors(st.XBackendTrafficPolicies[nn], controller) {
			add(fmt.Sprintf("XBackendTrafficPolicy %s (ancestor %s %s)", nn, kindOf(a.AncestorRef), a.AncestorRef.Name), a.Conditions)
		}
	}
	for _, name := range input.SortedNames(st.GatewayClasses) {
		add("GatewayClass "+name, st.GatewayClasses[name].Conditions)
	}
	for _, nn := range sorted(st.Gateways) {
		add("Gateway "+nn.String(), st.Gateways[nn].Conditions)
		for _, l := range st.Gateways[nn].Listeners {
			add(fmt.Sprintf("Gateway %s listener %s", nn, l.Name), l.Conditions)
		}
	}
	for _, nn := range sorted(st.ListenerSets) {
		add("ListenerSet "+nn.String(), st.ListenerSets[nn].Conditions)
		for _, l := range st.ListenerSets[nn].Listeners {
			add(fmt.Sprintf("ListenerSet %s listener %s", nn, l.Name), l.Conditions)
		}
	}
	for _, rk := range translator.RouteKinds {
		routes := translator.RouteStatusesOf(st, rk.Kind())
		for _, nn := range routes.SortedKeys() {
			route, _ := routes.Get(nn)
			for _, p := range condition.OurParents(route, controller) {
				add(fmt.Sprintf("%s %s (parent %s %s)", rk.Kind(), nn, kindOf(p.ParentRef), p.ParentRef.Name), p.Conditions)
			}
		}
	}
	for _, r := range fleetRefusals {
		// A Gateway fleet's refusal is on its Gateway's Programmed
		// (listed above); the shared resources' are said here.
		if gw, ok := translator.GatewayOfFleet(r.Fleet); !ok || !hasKey(st.Gateways, gw) {
			lines = append(lines, r.String())
		}
	}
	return lines
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
