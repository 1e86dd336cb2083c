package backendtls

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/condition"
	"github.com/tlsplane/tlsplane/translator/input"
)

// ReachingGateways lists, per attachment, the Gateways whose accepted
// routes send traffic to its target (a port named by sectionName, or any
// port of the Service); nil when no Gateway reaches any.
func ReachingGateways(as []*Attachment, reach map[input.ServicePort][]types.NamespacedName, ix *input.Index) [][]types.NamespacedName {
	if len(reach) == 0 {
		return nil
	}
	var out [][]types.NamespacedName
	for i, a := range as {
		if a.notFound != "" {
			continue
		}
		if gws := GatewaysReaching(ix.Services[a.Target.Service], a.Target.Service, a.Target.Section, reach); gws != nil {
			if out == nil {
				out = make([][]types.NamespacedName, len(as))
			}
			out[i] = gws
		}
	}
	return out
}

// GatewaysReaching are the Gateways whose accepted routes send traffic to
// a port of Service svc (named nn), only the port named section when it
// is not "", each once, in the order reach lists them port by port.
func GatewaysReaching(svc *corev1.Service, nn types.NamespacedName, section string, reach map[input.ServicePort][]types.NamespacedName) []types.NamespacedName {
	var out []types.NamespacedName
	for _, port := range svc.Spec.Ports {
		if section != "" && port.Name != section {
			continue
		}
		for _, gw := range reach[input.ServicePort{Service: nn, Port: port.Port}] {
			if !containsName(out, gw) {
				out = append(out, gw)
			}
		}
	}
	return out
}

func containsName(list []types.NamespacedName, nn types.NamespacedName) bool {
	for _, x := range list {
		if x == nn {
			return true
		}
	}
	return false
}

// GatewayAncestorStatuses are a policy's entries when Gateways reach its
// targets: one per Gateway (the spec's ancestor for status), whose
// Accepted is the first non-accepted verdict among the targets that
// Gateway reaches, so a policy may be valid for one Gateway and not
// another; a target no Gateway reaches keeps its Service entry.
func GatewayAncestorStatuses(v *Verdict, as []*Attachment, gateways [][]types.NamespacedName, controller gwv1.GatewayController) []gwv1.PolicyAncestorStatus {
	resolved := condition.Capped(resolvedRefsCondition(v))
	var out []gwv1.PolicyAncestorStatus
	index := map[string]int{}
	for i, a := range as {
		cond := condition.Capped(acceptedCondition(v, a))
		refs := []gwv1.ParentReference{ancestorRef(v, a)}
		if len(gateways[i]) > 0 {
			refs = refs[:0]
			for _, gw := range gateways[i] {
				refs = append(refs, GatewayAncestorRef(gw))
			}
		}
		for _, ref := range refs {
			out = AddAncestor(out, index, ref, controller, appendFreshness([]metav1.Condition{cond, resolved}, v)...)
		}
	}
	return out
}

// AddAncestor adds to out an entry for ref with conditions (Accepted
// first), or, when index says ref has one already (the Gateway reaches
// another target too), keeps there the worse Accepted of the two; index
// maps AncestorKey to a position in out.
func AddAncestor(out []gwv1.PolicyAncestorStatus, index map[string]int, ref gwv1.ParentReference, controller gwv1.GatewayController,
	conditions ...metav1.Condition) []gwv1.PolicyAncestorStatus {
	key := condition.AncestorKey(ref)
	if j, ok := index[key]; ok {
		if out[j].Conditions[0].Status == metav1.ConditionTrue && conditions[0].Status != metav1.ConditionTrue {
			out[j].Conditions[0] = conditions[0]
		}
		return out
	}
	index[key] = len(out)
	return append(out, gwv1.PolicyAncestorStatus{AncestorRef: ref, ControllerName: controller, Conditions: conditions})
}

// GatewayAncestorRef is Gateway gw as a policy status ancestor.
func GatewayAncestorRef(gw types.NamespacedName) gwv1.ParentReference {
	group, kind, ns := gwv1.Group(gwv1.GroupName), gwv1.Kind("Gateway"), gwv1.Namespace(gw.Namespace)
	return gwv1.ParentReference{Group: &group, Kind: &kind, Namespace: &ns, Name: gwv1.ObjectName(gw.Name)}
}
