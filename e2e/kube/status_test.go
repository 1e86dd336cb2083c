package kube

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// TestConformanceReconcileSequence is the Gateway API conformance sequence
// for CA certificate refs (backendtlspolicy-invalid-ca-certificate-ref and
// friends): missing ConfigMap → created → ca.crt emptied → restored →
// deleted, with the status and the served SDS Secret following each step.
func TestConformanceReconcileSequence(t *testing.T) {
	c := adminClients(t)
	ns := newNamespace(t, c)
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("conformance"), "--namespaces", ns)...)
	createService(t, c, ns, "pay")
	createPolicy(t, c, policy(ns, "pay", "pay", "", "ca", "pay.example.com"))

	t.Log("ConfigMap missing")
	expectStatus(t, c, ns, "pay", noValidCA, invalidCARef)
	expectServedCA(t, cp, ns, "")

	t.Log("ConfigMap created")
	ca := string(harness.NewAuthority(t, "conformance CA").PEM)
	createCAConfigMap(t, c, ns, "ca", ca)
	expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)
	expectServedCA(t, cp, ns, "conformance CA")

	t.Log("ca.crt emptied")
	setCA(t, c, ns, "ca", "")
	expectStatus(t, c, ns, "pay", noValidCA, invalidCARef)
	expectServedCA(t, cp, ns, "")

	t.Log("ca.crt restored")
	setCA(t, c, ns, "ca", ca)
	expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)
	expectServedCA(t, cp, ns, "conformance CA")

	t.Log("ConfigMap deleted")
	if err := c.kube.CoreV1().ConfigMaps(ns).Delete(context.Background(), "ca", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, c, ns, "pay", noValidCA, invalidCARef)
	expectServedCA(t, cp, ns, "")
}

// TestStatusFollowsEditsPortsAndConflicts covers observedGeneration on an
// edit, a Service whose ports change under a sectionName, a conflicting
// policy created and deleted, and another controller's entry kept intact.
func TestStatusFollowsEditsPortsAndConflicts(t *testing.T) {
	c := adminClients(t)
	ns := newNamespace(t, c)
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("status"), "--namespaces", ns)...)
	createService(t, c, ns, "pay")
	createCAConfigMap(t, c, ns, "ca", string(harness.NewAuthority(t, "status CA").PEM))
	createPolicy(t, c, policy(ns, "pay", "pay", "https", "ca", "pay.example.com"))
	p := expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)
	if p.Generation != 1 {
		t.Fatalf("generation = %d, want 1", p.Generation)
	}

	t.Log("another controller's entry is kept")
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := getPolicy(t, c, ns, "pay")
		p.Status.Ancestors = append(p.Status.Ancestors, otherControllerEntry(ns))
		_, err := c.gateway.GatewayV1().BackendTLSPolicies(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("write other controller's status: %v", err)
	}

	t.Log("policy edited: observedGeneration follows generation")
	p = getPolicy(t, c, ns, "pay")
	p.Spec.Validation.Hostname = "pay2.example.com"
	if _, err := c.gateway.GatewayV1().BackendTLSPolicies(ns).Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)
	if p.Generation != 2 {
		t.Fatalf("generation = %d after an edit, want 2", p.Generation)
	}
	expectOtherControllerKept(t, p)

	t.Log("Service port renamed away from the policy's sectionName")
	setServicePorts(t, c, ns, "pay", corev1.ServicePort{Name: "tls", Port: 443, TargetPort: intstr.FromInt32(8443)})
	expectStatus(t, c, ns, "pay", targetNotFound, resolvedTrue)
	t.Log("Service port named back")
	setServicePorts(t, c, ns, "pay", corev1.ServicePort{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443)})
	expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)

	t.Log("a newer policy on the same port conflicts")
	createPolicy(t, c, policy(ns, "pay-newer", "pay", "https", "ca", "pay.example.com"))
	expectStatus(t, c, ns, "pay-newer", conflicted, resolvedTrue)
	expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)
	t.Log("the older one deleted: the newer is accepted")
	if err := c.gateway.GatewayV1().BackendTLSPolicies(ns).Delete(context.Background(), "pay", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, c, ns, "pay-newer", acceptedTrue, resolvedTrue)
	expectNoWriteStorm(t, cp)
	if n := cp.statusWrites(t); n == "0" {
		t.Fatalf("status writes metric = %s after several status changes", n)
	}
}

func getPolicy(t *testing.T, c clients, ns, name string) *gwv1.BackendTLSPolicy {
	t.Helper()
	p, err := c.gateway.GatewayV1().BackendTLSPolicies(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func setServicePorts(t *testing.T, c clients, ns, name string, ports ...corev1.ServicePort) {
	t.Helper()
	svc, err := c.kube.CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.Ports = ports
	if _, err := c.kube.CoreV1().Services(ns).Update(context.Background(), svc, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update Service %s/%s ports: %v", ns, name, err)
	}
}

const otherController gwv1.GatewayController = "example.com/other-gateway"

func otherControllerEntry(ns string) gwv1.PolicyAncestorStatus {
	gw, kind, nsName := gwv1.Group("gateway.networking.k8s.io"), gwv1.Kind("Gateway"), gwv1.Namespace(ns)
	return gwv1.PolicyAncestorStatus{
		AncestorRef:    gwv1.ParentReference{Group: &gw, Kind: &kind, Namespace: &nsName, Name: "edge"},
		ControllerName: otherController,
		Conditions: []metav1.Condition{{
			Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", Message: "written by another controller",
			ObservedGeneration: 1, LastTransitionTime: metav1.Now(),
		}},
	}
}

func expectOtherControllerKept(t *testing.T, p *gwv1.BackendTLSPolicy) {
	t.Helper()
	for _, a := range p.Status.Ancestors {
		if a.ControllerName == otherController {
			if len(a.Conditions) != 1 || !strings.Contains(a.Conditions[0].Message, "another controller") || a.Conditions[0].ObservedGeneration != 1 {
				t.Fatalf("other controller's entry changed: %+v", a)
			}
			return
		}
	}
	t.Fatalf("other controller's entry lost: %+v", p.Status.Ancestors)
}
