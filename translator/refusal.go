package translator

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/condition"
)

// A fault stays with its objects: what makes one Gateway fleet's
// configuration unservable refuses that fleet (it keeps what it was
// served), never the translation, and the objects involved say so.

// ObjectRef names one input object.
type ObjectRef struct {
	Kind Kind
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
	// Objects are those involved: the fleet's Gateway first, then the
	// other objects of the conflict.
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

// ReasonSecretNameConflict is the Programmed reason of a Gateway whose
// listener certificate has the SDS name of a secret the clusters read.
const ReasonSecretNameConflict = "SecretNameConflict"

// ReasonFleetNotServable is the Programmed reason of a Gateway whose
// fleet's configuration the publisher refused (a check Envoy would fail).
const ReasonFleetNotServable = "FleetNotServable"

// GatewayOfFleet is the Gateway a Gateway fleet serves
// (plan.GatewayFleet): namespaces and names hold no "/".
func GatewayOfFleet(fleet string) (types.NamespacedName, bool) {
	ns, name, ok := strings.Cut(fleet, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true
}

// FleetConflicts finds the Gateway fleets of out whose own secrets (the
// listener certificates, private keys served to that fleet only) bear the
// name of a secret every fleet is served: Envoy cannot be given both. The
// Gateway is refused, not the policies, whose clusters other fleets read.
// Sorted by fleet; it costs a binary search per own secret.
func FleetConflicts(out Output) []FleetRefusal {
	if len(out.Fleets) == 0 || len(out.Secrets) == 0 {
		return nil
	}
	var refusals []FleetRefusal
	// Every Update looks: no sort of thousands of fleets for the rare hit.
	for fleet, own := range out.Fleets {
		gw, ok := GatewayOfFleet(fleet)
		if !ok || own == nil {
			continue
		}
		for _, s := range own.Secrets {
			if _, shared := slices.BinarySearchFunc(out.Secrets, s.GetName(), func(x *tlsv3.Secret, name string) int {
				return strings.Compare(x.GetName(), name)
			}); !shared {
				continue
			}
			r := FleetRefusal{Fleet: fleet, Objects: []ObjectRef{{Kind: KindGateway, Name: gw}}, Reason: ReasonSecretNameConflict}
			var others []string
			for _, p := range out.Origins[s.GetName()] {
				r.Objects = append(r.Objects, ObjectRef{Kind: KindBackendTLSPolicy, Name: p})
				others = append(others, "BackendTLSPolicy "+p.String())
			}
			if len(others) == 0 {
				others = []string{"the clusters"}
			}
			r.Message = fmt.Sprintf("listener certificate %q has the SDS name of a secret the clusters of %s read; the fleet keeps its previous configuration",
				s.GetName(), strings.Join(others, ", "))
			refusals = append(refusals, r)
			break
		}
	}
	slices.SortFunc(refusals, func(a, b FleetRefusal) int { return strings.Compare(a.Fleet, b.Fleet) })
	return refusals
}

// ConditionConflicted is the implementation-specific condition a
// policy's ancestor entries carry, True, while a secret its clusters read
// has the SDS name of a Gateway's listener certificate: the policy is
// served, the Gateway's fleet is refused; it names the Gateway.
const ConditionConflicted = "tlsplane.io/Conflicted"

// withFleetConflicts is out with the Gateway of each fleet FleetConflicts
// finds Programmed=False naming the other objects, and each of those
// policies Conflicted naming the Gateway: the translator judges the
// conflict, so the statuses are there whoever publishes. previous gives
// the policies' conditions their lastTransitionTime.
func withFleetConflicts(out Output, previous PreviousStatus, controller gwv1.GatewayController, now time.Time, stamp metav1.Time) Output {
	conflicts := FleetConflicts(out)
	if len(conflicts) == 0 {
		return out
	}
	out.GatewayAPI = RefuseGateways(out.GatewayAPI, conflicts, stamp)
	conds := map[types.NamespacedName]metav1.Condition{}
	for _, r := range conflicts {
		for _, o := range r.Objects[1:] {
			if o.Kind != KindBackendTLSPolicy {
				continue
			}
			msg := fmt.Sprintf("%s: %s is refused, not this policy: %s", r.Reason, r.Objects[0], r.Message)
			if c, ok := conds[o.Name]; ok {
				msg = c.Message + "; " + msg
			}
			conds[o.Name] = metav1.Condition{Type: ConditionConflicted, Status: metav1.ConditionTrue, Reason: r.Reason, Message: msg}
		}
	}
	out.Statuses = WithAncestorCondition(out.Statuses, conds, previous, controller, now)
	return out
}

// RefuseGateways returns statuses with each refused fleet's Gateway
// Programmed=False, the reason and message of its refusal; statuses is not
// changed (its maps are shared read-only).
func RefuseGateways(statuses GatewayAPIStatuses, refusals []FleetRefusal, now metav1.Time) GatewayAPIStatuses {
	var gateways map[types.NamespacedName]gwv1.GatewayStatus
	for _, r := range refusals {
		nn, ok := GatewayOfFleet(r.Fleet)
		if !ok {
			continue
		}
		st, ok := statuses.Gateways[nn]
		if !ok {
			continue
		}
		if gateways == nil {
			gateways = make(map[types.NamespacedName]gwv1.GatewayStatus, len(statuses.Gateways))
			for k, v := range statuses.Gateways {
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
		statuses.Gateways = gateways
	}
	return statuses
}
