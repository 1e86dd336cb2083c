package kube

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// httpGateway is a Gateway of class with one HTTP listener on port and a
// fixed address, admitting routes of its own namespace.
func httpGateway(ns, name, class, address string, port int32) *gwv1.Gateway {
	ip := gwv1.IPAddressType
	return &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gwv1.GatewaySpec{
			GatewayClassName: gwv1.ObjectName(class),
			Addresses:        []gwv1.GatewaySpecAddress{{Type: &ip, Value: address}},
			Listeners:        []gwv1.Listener{{Name: "http", Protocol: gwv1.HTTPProtocolType, Port: gwv1.PortNumber(port)}},
		},
	}
}

// routeTo is an HTTPRoute of ns attached to Gateway gateway (same
// namespace) for hostname, sending everything to Service svcNS/svc:port.
func routeTo(ns, name, gateway, hostname, svcNS, svc string, port int32) *gwv1.HTTPRoute {
	svcNamespace, p := gwv1.Namespace(svcNS), gwv1.PortNumber(port)
	return &gwv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: gwv1.ObjectName(gateway)}}},
			Hostnames:       []gwv1.Hostname{gwv1.Hostname(hostname)},
			Rules: []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{
				BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(svc), Namespace: &svcNamespace, Port: &p},
			}}}}},
		},
	}
}

// grantRoutesFrom is a ReferenceGrant in ns letting HTTPRoutes of each of
// from refer to Services of ns.
func grantRoutesFrom(ns, name string, from ...string) *gwv1.ReferenceGrant {
	g := &gwv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       gwv1.ReferenceGrantSpec{To: []gwv1.ReferenceGrantTo{{Group: "", Kind: "Service"}}},
	}
	for _, f := range from {
		g.Spec.From = append(g.Spec.From, gwv1.ReferenceGrantFrom{Group: gwv1.GroupName, Kind: "HTTPRoute", Namespace: gwv1.Namespace(f)})
	}
	return g
}

// expectConditions checks conds against want (type → expected), observed
// at generation.
func expectConditions(conds []metav1.Condition, want map[string]cond, generation int64) error {
	for typ, w := range want {
		got := findCondition(conds, typ)
		if got == nil {
			return fmt.Errorf("no %s condition in %+v", typ, conds)
		}
		if got.Status != w.status || (w.reason != "" && got.Reason != w.reason) {
			return fmt.Errorf("%s = %s/%s (%s), want %v", typ, got.Status, got.Reason, got.Message, w)
		}
		if got.ObservedGeneration != generation {
			return fmt.Errorf("%s observedGeneration %d, generation %d", typ, got.ObservedGeneration, generation)
		}
	}
	return nil
}

// expectRouteParent waits until the route's one parent entry of our
// controller has the expected Accepted and ResolvedRefs.
func expectRouteParent(t *testing.T, c clients, ns, name string, accepted, resolved cond) *gwv1.HTTPRoute {
	t.Helper()
	var last *gwv1.HTTPRoute
	eventually(t, statusWait, fmt.Sprintf("HTTPRoute %s/%s Accepted=%v ResolvedRefs=%v", ns, name, accepted, resolved), func() error {
		r, err := c.gateway.GatewayV1().HTTPRoutes(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		last = r
		var ours []gwv1.RouteParentStatus
		for _, p := range r.Status.Parents {
			if p.ControllerName == controller {
				ours = append(ours, p)
			}
		}
		if len(ours) != 1 {
			return fmt.Errorf("%d parent entries of %s, want 1: %+v", len(ours), controller, r.Status.Parents)
		}
		return expectConditions(ours[0].Conditions, map[string]cond{"Accepted": accepted, "ResolvedRefs": resolved}, r.Generation)
	})
	return last
}

// ancestorVerdicts maps each ancestor entry of our controller on policy
// ns/name, as "Kind namespace/name", to its Accepted condition.
func ancestorVerdicts(c clients, ns, name string) (map[string]metav1.Condition, error) {
	p, err := c.gateway.GatewayV1().BackendTLSPolicies(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]metav1.Condition{}
	for _, a := range p.Status.Ancestors {
		if a.ControllerName != controller {
			continue
		}
		key := ancestorKey(a.AncestorRef, ns)
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("two entries for %s: %+v", key, p.Status.Ancestors)
		}
		if accepted := findCondition(a.Conditions, "Accepted"); accepted != nil {
			out[key] = *accepted
		}
	}
	return out, nil
}

func ancestorKey(ref gwv1.ParentReference, policyNS string) string {
	kind, ns := "Gateway", policyNS
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	return kind + " " + ns + "/" + string(ref.Name)
}

// expectAncestors waits until policy ns/name has exactly the ancestors of
// want, each with its expected Accepted.
func expectAncestors(t *testing.T, c clients, ns, name string, want map[string]cond) {
	t.Helper()
	eventually(t, statusWait, fmt.Sprintf("BackendTLSPolicy %s/%s ancestors %v", ns, name, want), func() error {
		got, err := ancestorVerdicts(c, ns, name)
		if err != nil {
			return err
		}
		if len(got) != len(want) {
			return fmt.Errorf("ancestors %v, want %v", got, want)
		}
		for key, w := range want {
			g, ok := got[key]
			if !ok {
				return fmt.Errorf("no ancestor %s in %v", key, got)
			}
			if g.Status != w.status || (w.reason != "" && g.Reason != w.reason) {
				return fmt.Errorf("%s: Accepted = %s/%s (%s), want %v", key, g.Status, g.Reason, g.Message, w)
			}
		}
		return nil
	})
}
