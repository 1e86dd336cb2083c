package trafficpolicy

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
)

// Target is a backend a policy may govern: a Service and an XBackend of
// one name are two targets.
type Target struct {
	Group, Kind, Namespace, Name string
}

// ServiceTarget is the target of a core Service.
func ServiceTarget(nn types.NamespacedName) Target {
	return Target{Kind: "Service", Namespace: nn.Namespace, Name: nn.Name}
}

// XBackendTarget is the target of an XBackend.
func XBackendTarget(nn types.NamespacedName) Target {
	return Target{Group: gwxv1a1.GroupName, Kind: "XBackend", Namespace: nn.Namespace, Name: nn.Name}
}

// NamespacedName is the target's object name.
func (t Target) NamespacedName() types.NamespacedName {
	return types.NamespacedName{Namespace: t.Namespace, Name: t.Name}
}

// IsService: the target is a core Service.
func (t Target) IsService() bool { return t.Group == "" && t.Kind == "Service" }

// IsXBackend: the target is an XBackend.
func (t Target) IsXBackend() bool { return t.Group == gwxv1a1.GroupName && t.Kind == "XBackend" }

func (t Target) String() string {
	if t.Group == "" {
		return fmt.Sprintf("%s %s/%s", t.Kind, t.Namespace, t.Name)
	}
	return fmt.Sprintf("%s.%s %s/%s", t.Kind, t.Group, t.Namespace, t.Name)
}

// ancestorRef is the target as a status ancestor, for a target no
// Gateway reaches.
func (t Target) ancestorRef() gwv1.ParentReference {
	group, kind, ns := gwv1.Group(t.Group), gwv1.Kind(t.Kind), gwv1.Namespace(t.Namespace)
	return gwv1.ParentReference{Group: &group, Kind: &kind, Namespace: &ns, Name: gwv1.ObjectName(t.Name)}
}

// targetOf is a policy's targetRef as a Target in the policy's namespace.
func targetOf(ref gwv1.LocalPolicyTargetReference, namespace string) Target {
	return Target{Group: string(ref.Group), Kind: string(ref.Kind), Namespace: namespace, Name: string(ref.Name)}
}
