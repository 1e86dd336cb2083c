package kube

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// TestGatewayAPIStatuses runs tlsplane with deploy/'s ServiceAccount over
// a GatewayClass of ours, two Gateways in namespaces of their own, each
// with an HTTPRoute to one Service of a third namespace (through a
// ReferenceGrant that first admits only one of them), BackendTLSPolicies
// on that Service, and a second Service no Gateway reaches, and checks the
// statuses tlsplane writes on the real API server.
func TestGatewayAPIStatuses(t *testing.T) {
	c := adminClients(t)
	ctx := context.Background()
	nsA, nsB, nsSvc := newNamespace(t, c), newNamespace(t, c), newNamespace(t, c)
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t),
		append(leaseFlags("gatewayapi"), "--namespaces", strings.Join([]string{nsA, nsB, nsSvc}, ","))...)

	// GatewayClasses are cluster-scoped: one named after this test's run.
	class := "tlsplane-" + nsA[strings.LastIndex(nsA, "-")+1:]
	if _, err := c.gateway.GatewayV1().GatewayClasses().Create(ctx, &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: class},
		Spec:       gwv1.GatewayClassSpec{ControllerName: controller},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create GatewayClass %s: %v", class, err)
	}
	t.Cleanup(func() { _ = c.gateway.GatewayV1().GatewayClasses().Delete(ctx, class, metav1.DeleteOptions{}) })

	// Service shop: port https reached through Gateway a, port alt through
	// Gateway b. Service unreached: no route.
	createService(t, c, nsSvc, "shop",
		corev1.ServicePort{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443)},
		corev1.ServicePort{Name: "alt", Port: 8443, TargetPort: intstr.FromInt32(8443)})
	createService(t, c, nsSvc, "unreached")
	createCAConfigMap(t, c, nsSvc, "ca", string(harness.NewAuthority(t, "gateway api CA").PEM))
	// shop-alt is older, so it wins port alt; shop's attachment there is
	// Conflicted, and only Gateway b reaches port alt: shop is accepted for
	// Gateway a and not for Gateway b.
	older := createPolicy(t, c, policy(nsSvc, "shop-alt", "shop", "alt", "ca", "shop.example.com"))
	// creationTimestamp has a resolution of one second.
	time.Sleep(time.Until(older.CreationTimestamp.Add(1100 * time.Millisecond)))
	shop := policy(nsSvc, "shop", "shop", "https", "ca", "shop.example.com")
	alt := gwv1.SectionName("alt")
	shop.Spec.TargetRefs = append(shop.Spec.TargetRefs, gwv1.LocalPolicyTargetReferenceWithSectionName{
		LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{Kind: "Service", Name: "shop"}, SectionName: &alt})
	createPolicy(t, c, shop)
	createPolicy(t, c, policy(nsSvc, "unreached", "unreached", "", "ca", "unreached.example.com"))

	for _, gw := range []*gwv1.Gateway{httpGateway(nsA, "a", class, "192.0.2.10", 8080), httpGateway(nsB, "b", class, "192.0.2.11", 8080)} {
		if _, err := c.gateway.GatewayV1().Gateways(gw.Namespace).Create(ctx, gw, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Gateway %s/%s: %v", gw.Namespace, gw.Name, err)
		}
	}
	for _, r := range []*gwv1.HTTPRoute{routeTo(nsA, "shop", "a", "a.example.com", nsSvc, "shop", 443), routeTo(nsB, "shop", "b", "b.example.com", nsSvc, "shop", 8443)} {
		if _, err := c.gateway.GatewayV1().HTTPRoutes(r.Namespace).Create(ctx, r, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create HTTPRoute %s/%s: %v", r.Namespace, r.Name, err)
		}
	}
	// Only nsA's routes may refer to nsSvc's Services, for now.
	if _, err := c.gateway.GatewayV1().ReferenceGrants(nsSvc).Create(ctx, grantRoutesFrom(nsSvc, "routes", nsA), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ReferenceGrant: %v", err)
	}

	t.Log("GatewayClass accepted, with its supported features")
	eventually(t, statusWait, "GatewayClass "+class+" Accepted", func() error {
		gc, err := c.gateway.GatewayV1().GatewayClasses().Get(ctx, class, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(gc.Status.SupportedFeatures) == 0 {
			return fmt.Errorf("no supportedFeatures: %+v", gc.Status)
		}
		return expectConditions(gc.Status.Conditions, map[string]cond{"Accepted": {metav1.ConditionTrue, "Accepted"}}, gc.Generation)
	})

	t.Log("Gateways accepted, programmed, addressed; their listener has one route")
	for _, gw := range []struct{ ns, name, address string }{{nsA, "a", "192.0.2.10"}, {nsB, "b", "192.0.2.11"}} {
		eventually(t, statusWait, fmt.Sprintf("Gateway %s/%s status", gw.ns, gw.name), func() error {
			g, err := c.gateway.GatewayV1().Gateways(gw.ns).Get(ctx, gw.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if err := expectConditions(g.Status.Conditions, map[string]cond{
				"Accepted": {metav1.ConditionTrue, "Accepted"}, "Programmed": {metav1.ConditionTrue, "Programmed"},
			}, g.Generation); err != nil {
				return err
			}
			if len(g.Status.Addresses) != 1 || g.Status.Addresses[0].Value != gw.address {
				return fmt.Errorf("addresses %+v, want %s", g.Status.Addresses, gw.address)
			}
			if len(g.Status.Listeners) != 1 || g.Status.Listeners[0].AttachedRoutes != 1 {
				return fmt.Errorf("listeners %+v, want one with 1 attached route", g.Status.Listeners)
			}
			return expectConditions(g.Status.Listeners[0].Conditions, map[string]cond{
				"Accepted": {metav1.ConditionTrue, ""}, "Programmed": {metav1.ConditionTrue, ""},
				"ResolvedRefs": {metav1.ConditionTrue, ""}, "Conflicted": {metav1.ConditionFalse, ""},
			}, g.Generation)
		})
	}

	t.Log("HTTPRoutes: a's backend is granted, b's is not yet")
	expectRouteParent(t, c, nsA, "shop", cond{metav1.ConditionTrue, "Accepted"}, cond{metav1.ConditionTrue, "ResolvedRefs"})
	expectRouteParent(t, c, nsB, "shop", cond{metav1.ConditionTrue, "Accepted"}, cond{metav1.ConditionFalse, string(gwv1.RouteReasonRefNotPermitted)})

	t.Log("ReferenceGrant extended to b's namespace: b's backend resolves")
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		g, err := c.gateway.GatewayV1().ReferenceGrants(nsSvc).Get(ctx, "routes", metav1.GetOptions{})
		if err != nil {
			return err
		}
		g.Spec.From = grantRoutesFrom(nsSvc, "routes", nsA, nsB).Spec.From
		_, err = c.gateway.GatewayV1().ReferenceGrants(nsSvc).Update(ctx, g, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("update ReferenceGrant: %v", err)
	}
	expectRouteParent(t, c, nsB, "shop", cond{metav1.ConditionTrue, "Accepted"}, cond{metav1.ConditionTrue, "ResolvedRefs"})

	t.Log("policies: the Gateways that reach their targets are their ancestors; the unreached Service keeps its own")
	gwA, gwB := "Gateway "+nsA+"/a", "Gateway "+nsB+"/b"
	expectAncestors(t, c, nsSvc, "shop", map[string]cond{gwA: acceptedTrue, gwB: conflicted})
	expectAncestors(t, c, nsSvc, "shop-alt", map[string]cond{gwB: acceptedTrue})
	expectAncestors(t, c, nsSvc, "unreached", map[string]cond{"Service " + nsSvc + "/unreached": acceptedTrue})

	expectNoWriteStorm(t, cp)
}
