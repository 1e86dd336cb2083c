// Package dataplane puts into statuses what serving a translation found:
// the Gateway fleets the publisher refused (a check Envoy would fail), and
// the conditions the data plane observed (Envoy's rejections,
// handshakes). It works on the statuses the translator computed, after
// translation, and never changes them in place.
package dataplane

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/condition"
	"github.com/tlsplane/tlsplane/translator/input"
)

// A fault stays with its objects: what makes one Gateway fleet's
// configuration unservable refuses that fleet (it keeps what it was
// served), never the translation, and the objects involved say so.

// ObjectRef names one input object.
type ObjectRef struct {
	Kind input.Kind
	Name types.NamespacedName
}

func (o ObjectRef) String() string { return string(o.Kind) + " " + o.Name.String() }

// FleetRefusal is one fleet whose new configuration is not served, and
// why. Fleet "" with Namespace set is the share every fleet is served
// (clusters, endpoints, CA and client secrets), left without Namespace's
// clusters.
type FleetRefusal struct {
	Fleet     string
	Namespace string
	// Objects are those involved: the fleet's Gateway, when it has one.
	Objects []ObjectRef
	Reason  string
	Message string
}

func (r FleetRefusal) String() string {
	names := make([]string, len(r.Objects))
	for i, o := range r.Objects {
		names[i] = o.String()
	}
	who := "fleet " + r.Fleet
	switch {
	case r.Fleet == "" && r.Namespace != "":
		who = "the clusters of namespace " + r.Namespace
	case r.Fleet == "":
		who = "the resources every fleet is served"
	}
	return fmt.Sprintf("%s refused (%s): %s; objects: %s", who, r.Reason, r.Message, strings.Join(names, ", "))
}

// ReasonFleetNotServable is the Programmed reason of a Gateway whose
// fleet's configuration the publisher refused (a check Envoy would fail).
const ReasonFleetNotServable = "FleetNotServable"

// ReasonEnvoyBuildRefuses is the reason of a refusal that withholds one
// cluster from a fleet whose Envoy build cannot take its TLS parameters.
// Its objects are the policies and XBackends that made the cluster, whose
// statuses say so; the fleet's Gateway serves everything else and stays
// Programmed.
const ReasonEnvoyBuildRefuses = "EnvoyBuildRefuses"

// GatewayOfFleet is the Gateway a Gateway fleet serves
// (plan.GatewayFleet): namespaces and names hold no "/".
func GatewayOfFleet(fleet string) (types.NamespacedName, bool) {
	ns, name, ok := strings.Cut(fleet, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true
}

// RefuseGateways returns statuses with each refused fleet's Gateway
// Programmed=False, the reason and message of its refusal; statuses is not
// changed (shared read-only), and comes back when no Gateway is refused.
func RefuseGateways(statuses map[types.NamespacedName]gwv1.GatewayStatus, refusals []FleetRefusal, now metav1.Time) map[types.NamespacedName]gwv1.GatewayStatus {
	var gateways map[types.NamespacedName]gwv1.GatewayStatus
	for _, r := range refusals {
		if r.Reason == ReasonEnvoyBuildRefuses {
			continue
		}
		nn, ok := GatewayOfFleet(r.Fleet)
		if !ok {
			continue
		}
		st, ok := statuses[nn]
		if !ok {
			continue
		}
		if gateways == nil {
			gateways = make(map[types.NamespacedName]gwv1.GatewayStatus, len(statuses))
			for k, v := range statuses {
				gateways[k] = v
			}
		}
		st.Conditions = slices.Clone(st.Conditions)
		prev := meta.FindStatusCondition(st.Conditions, string(gwv1.GatewayConditionProgrammed))
		c := metav1.Condition{Type: string(gwv1.GatewayConditionProgrammed), Status: metav1.ConditionFalse,
			Reason: r.Reason, Message: r.Message, LastTransitionTime: now}
		if prev != nil {
			c.ObservedGeneration = prev.ObservedGeneration
			if prev.Status == metav1.ConditionFalse {
				c.LastTransitionTime = prev.LastTransitionTime
			}
		}
		meta.SetStatusCondition(&st.Conditions, condition.Capped(c))
		gateways[nn] = st
	}
	if gateways != nil {
		return gateways
	}
	return statuses
}
