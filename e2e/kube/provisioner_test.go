package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
)

// TestGatewayProvisioner runs two replicas of tlsplane --provision-gateways
// with deploy/'s ServiceAccount and provisioner RBAC, beside the real
// kube-controller-manager (Deployments, ReplicaSets, garbage collector):
// an accepted Gateway gets a ServiceAccount, bootstrap ConfigMap,
// Deployment and Service carrying its spec.infrastructure labels and
// annotations and owned by it, as do the ReplicaSet and Pod the
// controllers make from them (in a namespace enforcing the restricted Pod
// Security Standard); a changed infrastructure label reaches them
// all with one write per object, by the leader, and nothing more; deleting the Gateway
// deletes them all. It runs with --provision-namespaces and deploy/'s
// provisioner Role in the Gateway's namespace only, and its admission
// policy: the identity-granting keys of spec.infrastructure
// (eks.amazonaws.com/role-arn, iam.gke.io/gcp-service-account) reach neither
// the ServiceAccount nor the Pod, and the Gateway's
// tlsplane.io/InfrastructureMetadata condition names them; a Gateway of
// ours in a watched namespace not provisioned gets nothing, and its
// tlsplane.io/Provisioning condition says why.
func TestGatewayProvisioner(t *testing.T) {
	kcm, err := api.StartControllerManager(apiserver.ClusterControllers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kcm.Stop)
	c := adminClients(t)
	ctx := context.Background()
	kubeconfig := serviceAccountKubeconfig(t)
	ns := newNamespace(t, c)
	unprovisioned := ns + "-elsewhere"
	createNamespace(t, c, unprovisioned)
	applyProvisionerRBAC(t, ns)
	// The Envoy Pods must pass the restricted Pod Security Standard: the
	// ReplicaSet controller could not create them otherwise.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := c.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
		_, err = c.kube.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	flags := append(leaseFlags("provisioner"), "--namespaces", ns+","+unprovisioned,
		"--provision-gateways", "--provision-namespaces", ns, "--gateway-xds-address", "tlsplane-xds.tlsplane-system.svc:18000")
	// Two replicas: only the Lease holder provisions.
	replicas := []*controlPlane{startTLSPlane(t, "tlsplane-1", kubeconfig, flags...), startTLSPlane(t, "tlsplane-2", kubeconfig, flags...)}

	class := createClass(t, c, ns)
	gw, err := c.gateway.GatewayV1().Gateways(ns).Create(ctx, &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec: gwv1.GatewaySpec{
			GatewayClassName: gwv1.ObjectName(class),
			Infrastructure: &gwv1.GatewayInfrastructure{
				Labels: map[gwv1.LabelKey]gwv1.LabelValue{"team": "payments"},
				Annotations: map[gwv1.AnnotationKey]gwv1.AnnotationValue{"example.com/cost-center": "42",
					// Identity-granting: dropped by the default --provision-denied-keys.
					"eks.amazonaws.com/role-arn":     "arn:aws:iam::111122223333:role/cluster-admin",
					"iam.gke.io/gcp-service-account": "admin@project.iam.gserviceaccount.com"},
			},
			Listeners: []gwv1.Listener{
				{Name: "http", Protocol: gwv1.HTTPProtocolType, Port: 8080},
				{Name: "tcp", Protocol: gwv1.TCPProtocolType, Port: 9000, AllowedRoutes: &gwv1.AllowedRoutes{Kinds: []gwv1.RouteGroupKind{{Kind: "TCPRoute"}}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const name = "tlsplane-edge"
	infra := func(team string) (map[string]string, map[string]string) {
		return map[string]string{"team": team, gwv1.GatewayNameLabelKey: "edge"}, map[string]string{"example.com/cost-center": "42"}
	}

	t.Log("the four objects, with the labels, annotations and owner reference")
	labels, annotations := infra("payments")
	eventually(t, statusWait, "provisioned objects", func() error {
		return provisioned(ctx, c, ns, name, string(gw.UID), labels, annotations)
	})
	svc, _ := c.kube.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || len(svc.Spec.Ports) != 2 || svc.Spec.Ports[0].Port != 8080 || svc.Spec.Ports[1].Port != 9000 {
		t.Errorf("Service %s/%s: type %s ports %+v, want LoadBalancer on 8080 and 9000", ns, name, svc.Spec.Type, svc.Spec.Ports)
	}
	cm, _ := c.kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if boot := cm.Data["bootstrap.json"]; !strings.Contains(boot, `"cluster": "`+ns+`/edge"`) || !strings.Contains(boot, `"address": "tlsplane-xds.tlsplane-system.svc"`) {
		t.Errorf("bootstrap of ConfigMap %s/%s:\n%s", ns, name, boot)
	}

	t.Log("the identity keys reached neither the ServiceAccount nor the Pod template; the Gateway names them")
	for _, k := range []string{"eks.amazonaws.com/role-arn", "iam.gke.io/gcp-service-account"} {
		sa, _ := c.kube.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
		d, _ := c.kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if _, ok := sa.Annotations[k]; ok {
			t.Errorf("ServiceAccount %s/%s carries annotation %s", ns, name, k)
		}
		if _, ok := d.Spec.Template.Annotations[k]; ok {
			t.Errorf("Deployment %s/%s's Pod template carries annotation %s", ns, name, k)
		}
	}
	eventually(t, statusWait, "Gateway condition tlsplane.io/InfrastructureMetadata", func() error {
		return gatewayCondition(ctx, c, ns, "edge", "tlsplane.io/InfrastructureMetadata", metav1.ConditionFalse, "KeysDropped",
			"annotations eks.amazonaws.com/role-arn (--provision-denied-keys), iam.gke.io/gcp-service-account (--provision-denied-keys)", "arn:aws")
	})

	t.Log("a Gateway of ours in a namespace not provisioned: its status says why, nothing is written")
	if _, err := c.gateway.GatewayV1().Gateways(unprovisioned).Create(ctx, &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: unprovisioned, Name: "edge"},
		Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(class),
			Listeners: []gwv1.Listener{{Name: "http", Protocol: gwv1.HTTPProtocolType, Port: 8080}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, statusWait, "Gateway condition tlsplane.io/Provisioning False", func() error {
		return gatewayCondition(ctx, c, unprovisioned, "edge", "tlsplane.io/Provisioning", metav1.ConditionFalse, "NamespaceNotAllowed",
			"namespace "+unprovisioned+" is not one of --provision-namespaces ("+ns+")", "")
	})
	if err := gatewayCondition(ctx, c, ns, "edge", "tlsplane.io/Provisioning", metav1.ConditionTrue, "NamespaceAllowed", "", ""); err != nil {
		t.Error(err)
	}

	t.Log("the ReplicaSet and Pod kube-controller-manager makes carry them")
	eventually(t, statusWait, "ReplicaSet and Pod", func() error { return podsCarry(ctx, c, ns, labels, annotations) })

	t.Log("spec.infrastructure.labels changes: every object follows, one write each")
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live, err := c.gateway.GatewayV1().Gateways(ns).Get(ctx, "edge", metav1.GetOptions{})
		if err != nil {
			return err
		}
		live.Spec.Infrastructure.Labels["team"] = "checkout"
		_, err = c.gateway.GatewayV1().Gateways(ns).Update(ctx, live, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	labels, annotations = infra("checkout")
	eventually(t, statusWait, "provisioned objects relabelled", func() error {
		return provisioned(ctx, c, ns, name, string(gw.UID), labels, annotations)
	})
	eventually(t, statusWait, "a ReplicaSet and Pod relabelled", func() error { return podsCarry(ctx, c, ns, labels, annotations) })
	// The status writer's Gateway writes and the objects' own events
	// since must not have caused writes: four creates, four updates, all
	// by the leader.
	time.Sleep(3 * time.Second)
	var applies []string
	for _, cp := range replicas {
		applies = append(applies, cp.metricSum(t, "tlsplane_gateway_provisioner_writes_total", `operation="apply"`, `result="ok"`))
		if errs := cp.metricSum(t, "tlsplane_gateway_provisioner_writes_total", `result="error"`); errs != "0" {
			t.Errorf("%s: provisioner write errors: %s", cp.name, errs)
		}
	}
	if slices.Sort(applies); !slices.Equal(applies, []string{"0", "8"}) {
		t.Errorf("tlsplane_gateway_provisioner_writes_total{operation=apply} of the two replicas: %v, want 8 by the leader (four objects created, then updated once) and 0 by the other", applies)
	}

	if l, err := c.kube.AppsV1().Deployments(unprovisioned).List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("Deployments in %s, which is not provisioned: %v %v", unprovisioned, l, err)
	}
	if l, err := c.kube.CoreV1().ServiceAccounts(unprovisioned).List(ctx, metav1.ListOptions{LabelSelector: gwv1.GatewayNameLabelKey}); err != nil || len(l.Items) != 0 {
		t.Errorf("ServiceAccounts of a Gateway in %s, which is not provisioned: %v %v", unprovisioned, l, err)
	}

	t.Log("the Gateway is deleted: the garbage collector deletes everything")
	if err := c.gateway.GatewayV1().Gateways(ns).Delete(ctx, "edge", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "provisioned objects deleted", func() error {
		selector := metav1.ListOptions{LabelSelector: gwv1.GatewayNameLabelKey + "=edge"}
		counts := map[string]int{}
		if l, err := c.kube.CoreV1().ServiceAccounts(ns).List(ctx, selector); err == nil {
			counts["ServiceAccounts"] = len(l.Items)
		}
		if l, err := c.kube.CoreV1().ConfigMaps(ns).List(ctx, selector); err == nil {
			counts["ConfigMaps"] = len(l.Items)
		}
		if l, err := c.kube.AppsV1().Deployments(ns).List(ctx, selector); err == nil {
			counts["Deployments"] = len(l.Items)
		}
		if l, err := c.kube.AppsV1().ReplicaSets(ns).List(ctx, selector); err == nil {
			counts["ReplicaSets"] = len(l.Items)
		}
		if l, err := c.kube.CoreV1().Pods(ns).List(ctx, selector); err == nil {
			counts["Pods"] = len(l.Items)
		}
		if l, err := c.kube.CoreV1().Services(ns).List(ctx, selector); err == nil {
			counts["Services"] = len(l.Items)
		}
		for _, n := range counts {
			if n > 0 {
				return fmt.Errorf("left: %v", counts)
			}
		}
		if len(counts) != 6 {
			return fmt.Errorf("some lists failed: %v", counts)
		}
		return nil
	})
}

// gatewayCondition checks condition typ of Gateway ns/name: its status,
// reason, a message containing want and not containing never (when set).
func gatewayCondition(ctx context.Context, c clients, ns, name, typ string, status metav1.ConditionStatus, reason, want, never string) error {
	gw, err := c.gateway.GatewayV1().Gateways(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, cond := range gw.Status.Conditions {
		if cond.Type != typ {
			continue
		}
		if cond.Status != status || cond.Reason != reason || !strings.Contains(cond.Message, want) || never != "" && strings.Contains(cond.Message, never) {
			return fmt.Errorf("Gateway %s/%s condition %s: %s %s %q; want %s %s with %q", ns, name, typ, cond.Status, cond.Reason, cond.Message, status, reason, want)
		}
		return nil
	}
	return fmt.Errorf("Gateway %s/%s has no condition %s: %+v", ns, name, typ, gw.Status.Conditions)
}

// createClass creates a GatewayClass of ours named after namespace ns,
// deleted at the end.
func createClass(t *testing.T, c clients, ns string) string {
	t.Helper()
	ctx := context.Background()
	class := "tlsplane-" + ns[strings.LastIndex(ns, "-")+1:]
	if _, err := c.gateway.GatewayV1().GatewayClasses().Create(ctx, &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: class},
		Spec:       gwv1.GatewayClassSpec{ControllerName: controller},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.gateway.GatewayV1().GatewayClasses().Delete(ctx, class, metav1.DeleteOptions{}) })
	return class
}

// provisioned checks the four objects ns/name: labels and annotations
// among theirs, and the Gateway of uid as controlling owner.
func provisioned(ctx context.Context, c clients, ns, name, uid string, labels, annotations map[string]string) error {
	var metas []metav1.Object
	sa, err := c.kube.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	cm, err := c.kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	d, err := c.kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	svc, err := c.kube.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	metas = append(metas, sa, cm, d, svc, &metav1.ObjectMeta{
		Name: "Deployment's Pod template", Labels: d.Spec.Template.Labels, Annotations: d.Spec.Template.Annotations,
		OwnerReferences: d.OwnerReferences})
	for _, m := range metas {
		if err := carries(m, labels, annotations); err != nil {
			return err
		}
		refs := m.GetOwnerReferences()
		if len(refs) != 1 || string(refs[0].UID) != uid || refs[0].Kind != "Gateway" || refs[0].Controller == nil || !*refs[0].Controller {
			return fmt.Errorf("%s: owner references %+v, want the Gateway (uid %s) as controller", m.GetName(), refs, uid)
		}
	}
	return nil
}

// podsCarry checks that a ReplicaSet and a Pod with the gateway-name
// label carry labels and annotations (the Pod both, the ReplicaSet its
// labels, as the Deployment controller copies them).
func podsCarry(ctx context.Context, c clients, ns string, labels, annotations map[string]string) error {
	selector := metav1.ListOptions{LabelSelector: gwv1.GatewayNameLabelKey + "=edge"}
	sets, err := c.kube.AppsV1().ReplicaSets(ns).List(ctx, selector)
	if err != nil {
		return err
	}
	if !anyCarries(sets.Items, func(rs appsv1.ReplicaSet) error { return carries(&rs, labels, nil) }) {
		return fmt.Errorf("no ReplicaSet of %d carries labels %v", len(sets.Items), labels)
	}
	pods, err := c.kube.CoreV1().Pods(ns).List(ctx, selector)
	if err != nil {
		return err
	}
	if !anyCarries(pods.Items, func(p corev1.Pod) error { return carries(&p, labels, annotations) }) {
		return fmt.Errorf("no Pod of %d carries labels %v and annotations %v", len(pods.Items), labels, annotations)
	}
	return nil
}

func anyCarries[T any](items []T, check func(T) error) bool {
	for _, it := range items {
		if check(it) == nil {
			return true
		}
	}
	return false
}

func carries(m metav1.Object, labels, annotations map[string]string) error {
	for k, v := range labels {
		if m.GetLabels()[k] != v {
			return fmt.Errorf("%s: labels %v, want %v among them", m.GetName(), m.GetLabels(), labels)
		}
	}
	for k, v := range annotations {
		if m.GetAnnotations()[k] != v {
			return fmt.Errorf("%s: annotations %v, want %v among them", m.GetName(), m.GetAnnotations(), annotations)
		}
	}
	return nil
}
