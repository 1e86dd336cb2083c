package kube

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// TestProvisionerLeastPrivilege applies deploy/rbac.yaml,
// provisioner-rbac.yaml in one namespace (gw) and provisioner-admission.yaml
// to the real API server, and shows what tlsplane's ServiceAccount can do
// with the provisioner on: asked of the authorizer (SubjectAccessReview),
// it writes Deployments, ServiceAccounts, Services and ConfigMaps in gw
// only, never in kube-system, another namespace or cluster-wide, and never
// Pods or ServiceAccount tokens; tried with its own token, the admission
// policy refuses a Deployment under a ServiceAccount it did not make, a
// change to or deletion of a ServiceAccount or Service it did not make,
// and an object without its label, and lets through what the provisioner
// writes.
func TestProvisionerLeastPrivilege(t *testing.T) {
	c := adminClients(t)
	ctx := context.Background()
	serviceAccountKubeconfig(t) // deploy/namespace.yaml and rbac.yaml
	gw := newNamespace(t, c)
	other := gw + "-other"
	createNamespace(t, c, other)
	applyProvisionerRBAC(t, gw)

	const user = "system:serviceaccount:tlsplane-system:tlsplane"
	var want []access
	for _, r := range []struct{ group, resource string }{
		{"apps", "deployments"}, {"", "serviceaccounts"}, {"", "services"}, {"", "configmaps"},
	} {
		for _, verb := range []string{"create", "patch", "delete"} {
			want = append(want,
				access{verb, r.group, r.resource, "", gw, true},
				access{verb, r.group, r.resource, "", other, false},
				access{verb, r.group, r.resource, "", "kube-system", false},
				access{verb, r.group, r.resource, "", "", false})
		}
		want = append(want, access{"update", r.group, r.resource, "", gw, false}) // server-side apply is a patch
	}
	want = append(want,
		// Its informers of what it labelled: in gw only.
		access{"watch", "apps", "deployments", "", gw, true},
		access{"watch", "apps", "deployments", "", "", false},
		access{"list", "", "serviceaccounts", "", gw, true},
		access{"list", "", "serviceaccounts", "", "", false},
		// Never a Pod, a token, an exec, or RBAC of its own.
		access{"create", "", "pods", "", gw, false},
		access{"create", "", "serviceaccounts", "token", gw, false},
		access{"create", "", "pods", "exec", gw, false},
		access{"create", "apps", "replicasets", "", gw, false},
		access{"create", "rbac.authorization.k8s.io", "rolebindings", "", gw, false},
		access{"bind", "rbac.authorization.k8s.io", "clusterroles", "", "", false},
		access{"escalate", "rbac.authorization.k8s.io", "roles", "", gw, false},
		access{"impersonate", "", "serviceaccounts", "", gw, false},
		access{"update", "admissionregistration.k8s.io", "validatingadmissionpolicies", "", "", false},
	)
	checkAccess(t, c, user, want)

	t.Log("with its own token: the admission policy")
	_, sa := releaseServiceAccount(t, c, "tlsplane-system", "tlsplane")
	// ServiceAccounts and Services someone else made, as a cluster's
	// privileged ones are, and of the provisioner's names.
	for _, name := range []string{"privileged", "tlsplane-taken"} {
		if _, err := c.kube.CoreV1().ServiceAccounts(gw).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"web", "tlsplane-web"} {
		if _, err := c.kube.CoreV1().Services(gw).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	relabel := []byte(`{"metadata":{"labels":{"app.kubernetes.io/managed-by":"tlsplane"}}}`)
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	ours := map[string]string{"app.kubernetes.io/managed-by": "tlsplane"}
	// The policy is enforced once the API server has loaded it: wait for
	// the first refusal, then check each case once.
	eventually(t, 30*time.Second, "the admission policy enforced", func() error {
		_, err := sa.AppsV1().Deployments(gw).Create(ctx, envoyDeployment(gw, "tlsplane-edge", "privileged", ours), dry)
		if !apierrors.IsForbidden(err) {
			return fmt.Errorf("a Deployment under ServiceAccount privileged: %v, want Forbidden", err)
		}
		return nil
	})
	for _, tc := range []struct {
		what   string
		call   func(kubernetes.Interface) error
		refuse string // "" for allowed; else in the error
	}{
		{"a Deployment in kube-system", func(k kubernetes.Interface) error {
			_, err := k.AppsV1().Deployments("kube-system").Create(ctx, envoyDeployment("kube-system", "tlsplane-edge", "tlsplane-edge", ours), dry)
			return err
		}, `deployments.apps is forbidden: User "` + user + `" cannot create resource "deployments" in API group "apps" in the namespace "kube-system"`},
		{"a Deployment in " + other, func(k kubernetes.Interface) error {
			_, err := k.AppsV1().Deployments(other).Create(ctx, envoyDeployment(other, "tlsplane-edge", "tlsplane-edge", ours), dry)
			return err
		}, "cannot create resource"},
		{"a Deployment under the foreign ServiceAccount privileged", func(k kubernetes.Interface) error {
			_, err := k.AppsV1().Deployments(gw).Create(ctx, envoyDeployment(gw, "tlsplane-edge", "privileged", ours), dry)
			return err
		}, "tlsplane may run Pods only under the ServiceAccount it made for them: Deployment " + gw + "/tlsplane-edge must name serviceAccountName tlsplane-edge"},
		{"a Deployment under the namespace's default ServiceAccount", func(k kubernetes.Interface) error {
			_, err := k.AppsV1().Deployments(gw).Create(ctx, envoyDeployment(gw, "tlsplane-edge", "", ours), dry)
			return err
		}, "must name serviceAccountName tlsplane-edge"},
		{"a Deployment that mounts its token", func(k kubernetes.Interface) error {
			d := envoyDeployment(gw, "tlsplane-edge", "tlsplane-edge", ours)
			d.Spec.Template.Spec.AutomountServiceAccountToken = nil
			_, err := k.AppsV1().Deployments(gw).Create(ctx, d, dry)
			return err
		}, "with automountServiceAccountToken false"},
		{"a Deployment without tlsplane's label", func(k kubernetes.Interface) error {
			_, err := k.AppsV1().Deployments(gw).Create(ctx, envoyDeployment(gw, "tlsplane-edge", "tlsplane-edge", nil), dry)
			return err
		}, "must be named tlsplane-* and labelled app.kubernetes.io/managed-by=tlsplane"},
		{"relabel the ServiceAccount privileged as tlsplane's", func(k kubernetes.Interface) error {
			_, err := k.CoreV1().ServiceAccounts(gw).Patch(ctx, "privileged", types.MergePatchType, relabel, metav1.PatchOptions{})
			return err
		}, "tlsplane may write only objects it provisions: serviceaccounts " + gw + "/privileged must be named tlsplane-*"},
		{"take over the ServiceAccount tlsplane-taken, someone else's", func(k kubernetes.Interface) error {
			_, err := k.CoreV1().ServiceAccounts(gw).Patch(ctx, "tlsplane-taken", types.MergePatchType, relabel, metav1.PatchOptions{})
			return err
		}, "tlsplane may change or delete only what it provisioned: serviceaccounts " + gw + "/tlsplane-taken is not labelled app.kubernetes.io/managed-by=tlsplane"},
		{"delete the ServiceAccount privileged", func(k kubernetes.Interface) error {
			return k.CoreV1().ServiceAccounts(gw).Delete(ctx, "privileged", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}, "tlsplane may change or delete only what it provisioned"},
		{"repoint the Service web", func(k kubernetes.Interface) error {
			_, err := k.CoreV1().Services(gw).Patch(ctx, "web", types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"app.kubernetes.io/managed-by":"tlsplane"}},"spec":{"selector":{"app":"thief"}}}`), metav1.PatchOptions{})
			return err
		}, "services " + gw + "/web must be named tlsplane-*"},
		{"take over the Service tlsplane-web, someone else's", func(k kubernetes.Interface) error {
			_, err := k.CoreV1().Services(gw).Patch(ctx, "tlsplane-web", types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"app.kubernetes.io/managed-by":"tlsplane"}},"spec":{"selector":{"app":"thief"}}}`), metav1.PatchOptions{})
			return err
		}, "services " + gw + "/tlsplane-web is not labelled"},
		{"a ServiceAccount without tlsplane's label", func(k kubernetes.Interface) error {
			_, err := k.CoreV1().ServiceAccounts(gw).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tlsplane-edge"}}, dry)
			return err
		}, "must be named tlsplane-* and labelled"},
		// What the provisioner writes passes.
		{"its ServiceAccount", func(k kubernetes.Interface) error {
			_, err := k.CoreV1().ServiceAccounts(gw).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tlsplane-edge", Labels: ours}}, dry)
			return err
		}, ""},
		{"its Deployment", func(k kubernetes.Interface) error {
			_, err := k.AppsV1().Deployments(gw).Create(ctx, envoyDeployment(gw, "tlsplane-edge", "tlsplane-edge", ours), dry)
			return err
		}, ""},
	} {
		err := tc.call(sa)
		switch {
		case tc.refuse == "" && err != nil:
			t.Errorf("%s as %s: %v, want allowed", tc.what, user, err)
		case tc.refuse != "" && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.refuse)):
			t.Errorf("%s as %s: %v, want Forbidden naming %q", tc.what, user, err, tc.refuse)
		case tc.refuse != "":
			t.Logf("%s: refused: %v", tc.what, err)
		}
	}
	policy, err := c.kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "tlsplane-provisioner", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tc := policy.Status.TypeChecking; tc != nil {
		for _, w := range tc.ExpressionWarnings {
			t.Logf("type checking of the policy: %s: %s", w.FieldRef, w.Warning)
		}
	}
	// The admin's writes are not the policy's business.
	if err := c.kube.CoreV1().ServiceAccounts(gw).Delete(ctx, "privileged", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("the admin deleting ServiceAccount privileged (dry run): %v", err)
	}
}

// envoyDeployment is a Deployment like the provisioner's: its Pods run
// under serviceAccount ("" for the namespace's default) without a token.
func envoyDeployment(ns, name, serviceAccount string, labels map[string]string) *appsv1.Deployment {
	no := false
	sel := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{
					ServiceAccountName: serviceAccount, AutomountServiceAccountToken: &no,
					Containers: []corev1.Container{{Name: "envoy", Image: "envoyproxy/envoy:v1.40-latest"}},
				},
			},
		},
	}
}
