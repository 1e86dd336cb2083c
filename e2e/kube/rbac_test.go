package kube

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	watchpkg "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// createNamespace creates namespace name, deleted at the test's end.
func createNamespace(t *testing.T, c clients, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.kube.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = c.kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// access is one question to the API server's authorizer; namespace ""
// asks cluster-wide (for a namespaced kind: in every namespace at once).
type access struct {
	verb, group, resource, subresource, namespace string
	allowed                                       bool
}

// checkAccess asks a SubjectAccessReview per entry for user and fails on
// every answer that differs.
func checkAccess(t *testing.T, c clients, user string, want []access) {
	t.Helper()
	differ := 0
	defer func() {
		t.Logf("%d SubjectAccessReviews for %s, %d answered otherwise than wanted", len(want), user, differ)
	}()
	for _, tc := range want {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: tc.verb, Group: tc.group, Resource: tc.resource, Subresource: tc.subresource, Namespace: tc.namespace,
			},
		}}
		got, err := c.kube.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), review, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Allowed != tc.allowed {
			resource := tc.resource
			if tc.subresource != "" {
				resource += "/" + tc.subresource
			}
			where := "cluster-wide"
			if tc.namespace != "" {
				where = "in " + tc.namespace
			}
			differ++
			t.Errorf("%s %s %s %s: allowed = %v, want %v", user, tc.verb, resource, where, got.Status.Allowed, tc.allowed)
		}
	}
}

// namespacedReads are the namespaced kinds tlsplane lists and watches, by
// API group; get is granted only where the status writer re-reads the
// live object after a conflict (the informers never get).
var namespacedReads = []struct {
	group, resource string
	get             bool
}{
	{"", "services", false}, {"", "configmaps", false}, {"", "secrets", false},
	{"discovery.k8s.io", "endpointslices", false},
	{"gateway.networking.k8s.io", "referencegrants", false},
	{"gateway.networking.k8s.io", "backendtlspolicies", true}, {"gateway.networking.k8s.io", "gateways", true},
	{"gateway.networking.k8s.io", "httproutes", true}, {"gateway.networking.k8s.io", "grpcroutes", true},
	{"gateway.networking.k8s.io", "tlsroutes", true}, {"gateway.networking.k8s.io", "tcproutes", true},
	{"gateway.networking.x-k8s.io", "xbackends", true}, {"gateway.networking.x-k8s.io", "xbackendtrafficpolicies", true},
}

// statusWrites are the namespaced kinds whose status tlsplane writes.
var statusWrites = []struct{ group, resource string }{
	{"gateway.networking.k8s.io", "backendtlspolicies"}, {"gateway.networking.k8s.io", "gateways"},
	{"gateway.networking.k8s.io", "httproutes"}, {"gateway.networking.k8s.io", "grpcroutes"},
	{"gateway.networking.k8s.io", "tlsroutes"}, {"gateway.networking.k8s.io", "tcproutes"},
	{"gateway.networking.x-k8s.io", "xbackends"}, {"gateway.networking.x-k8s.io", "xbackendtrafficpolicies"},
}

// TestRBACNamespacesLeastPrivilege renders charts/tlsplane with namespaces
// [a, b], applies it to the real API server, and shows that its
// ServiceAccount reads Secrets and ConfigMaps (and every other namespaced
// kind) in a and b only: neither in c nor cluster-wide, asked of the
// authorizer (SubjectAccessReview) and tried with the ServiceAccount's own
// token. Then tlsplane runs with that token and --namespaces a,b, and a
// policy in a with a CA ConfigMap becomes Accepted and its CA is served.
func TestRBACNamespacesLeastPrivilege(t *testing.T) {
	c := adminClients(t)
	rel := newNamespace(t, c) // the release's namespace, where the Lease is
	a, b, other := rel+"-a", rel+"-b", rel+"-c"
	for _, ns := range []string{a, b, other} {
		createNamespace(t, c, ns)
	}
	const release = "rbac-plane"
	rendered := helmTemplate(t, release, rel, valuesFile(t, fmt.Sprintf("namespaces: [%s, %s]\n", a, b)))

	var rbacKeys []string
	for _, o := range rendered {
		if strings.HasPrefix(o.GetAPIVersion(), "rbac.authorization.k8s.io/") {
			rbacKeys = append(rbacKeys, objectKey(o))
		}
	}
	slices.Sort(rbacKeys)
	wantKeys := []string{
		"ClusterRole /" + release, "ClusterRoleBinding /" + release,
		"Role " + a + "/" + release, "Role " + b + "/" + release, "Role " + rel + "/" + release + "-leader-election",
		"RoleBinding " + a + "/" + release, "RoleBinding " + b + "/" + release, "RoleBinding " + rel + "/" + release + "-leader-election",
	}
	slices.Sort(wantKeys)
	if !slices.Equal(rbacKeys, wantKeys) {
		t.Errorf("rendered RBAC objects:\n  %s\nwant:\n  %s", strings.Join(rbacKeys, "\n  "), strings.Join(wantKeys, "\n  "))
	}
	applyRendered(t, rendered)

	user := "system:serviceaccount:" + rel + ":" + release
	var want []access
	for _, r := range namespacedReads {
		for _, verb := range []string{"get", "list", "watch"} {
			granted := verb != "get" || r.get
			want = append(want,
				access{verb, r.group, r.resource, "", a, granted},
				access{verb, r.group, r.resource, "", b, granted},
				access{verb, r.group, r.resource, "", other, false},
				access{verb, r.group, r.resource, "", "", false})
		}
		// Never written.
		want = append(want, access{"create", r.group, r.resource, "", a, false}, access{"delete", r.group, r.resource, "", a, false})
	}
	for _, r := range statusWrites {
		want = append(want,
			access{"update", r.group, r.resource, "status", a, true},
			access{"update", r.group, r.resource, "status", b, true},
			access{"update", r.group, r.resource, "status", other, false},
			access{"update", r.group, r.resource, "status", "", false},
			// Read-modify-write: never patch, never the spec.
			access{"patch", r.group, r.resource, "status", a, false},
			access{"update", r.group, r.resource, "", a, false})
	}
	want = append(want,
		// Cluster-scoped kinds, whatever namespaces says.
		access{"list", "", "namespaces", "", "", true},
		access{"watch", "", "namespaces", "", "", true},
		access{"get", "", "namespaces", "", "", false},
		access{"update", "", "namespaces", "", "", false},
		access{"get", "gateway.networking.k8s.io", "gatewayclasses", "", "", true},
		access{"list", "gateway.networking.k8s.io", "gatewayclasses", "", "", true},
		access{"watch", "gateway.networking.k8s.io", "gatewayclasses", "", "", true},
		access{"update", "gateway.networking.k8s.io", "gatewayclasses", "status", "", true},
		access{"update", "gateway.networking.k8s.io", "gatewayclasses", "", "", false},
		access{"get", "gateway.networking.x-k8s.io", "xmeshes", "", "", true},
		access{"list", "gateway.networking.x-k8s.io", "xmeshes", "", "", true},
		access{"watch", "gateway.networking.x-k8s.io", "xmeshes", "", "", true},
		access{"update", "gateway.networking.x-k8s.io", "xmeshes", "status", "", true},
		access{"update", "gateway.networking.x-k8s.io", "xmeshes", "", "", false},
		// The release namespace: its Lease and the replicas' handshake
		// ConfigMaps, and not its Secrets (it is not one of namespaces).
		access{"get", "coordination.k8s.io", "leases", "", rel, true},
		access{"update", "coordination.k8s.io", "leases", "", rel, true},
		access{"update", "coordination.k8s.io", "leases", "", a, false},
		access{"create", "", "configmaps", "", rel, true},
		access{"delete", "", "configmaps", "", rel, true},
		access{"list", "", "secrets", "", rel, false},
		// Never written outside the release namespace.
		access{"update", "", "configmaps", "", a, false},
		access{"list", "", "pods", "", a, false},
	)
	checkAccess(t, c, user, want)

	t.Log("the ServiceAccount's own token: Secrets and ConfigMaps in a and b, not in c nor cluster-wide")
	kubeconfig, sa := releaseServiceAccount(t, c, rel, release)
	for _, ns := range []string{a, b, other} {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "peek"}, Data: map[string][]byte{"ca.crt": []byte("x")}}
		if _, err := c.kube.CoreV1().Secrets(ns).Create(context.Background(), secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, tc := range []struct {
		what string
		call func() error
		ok   bool
	}{
		{"list Secrets in " + a, func() error { return listsSecret(ctx, sa, a, "peek") }, true},
		{"list Secrets in " + b, func() error { return listsSecret(ctx, sa, b, "peek") }, true},
		{"watch Secrets in " + a, func() error { return watches(ctx, sa.CoreV1().Secrets(a).Watch) }, true},
		{"list ConfigMaps in " + a, func() error { _, err := sa.CoreV1().ConfigMaps(a).List(ctx, metav1.ListOptions{}); return err }, true},
		{"list ConfigMaps in " + b, func() error { _, err := sa.CoreV1().ConfigMaps(b).List(ctx, metav1.ListOptions{}); return err }, true},
		{"get Secret " + other + "/peek", func() error { _, err := sa.CoreV1().Secrets(other).Get(ctx, "peek", metav1.GetOptions{}); return err }, false},
		{"list Secrets in " + other, func() error { _, err := sa.CoreV1().Secrets(other).List(ctx, metav1.ListOptions{}); return err }, false},
		{"list ConfigMaps in " + other, func() error { _, err := sa.CoreV1().ConfigMaps(other).List(ctx, metav1.ListOptions{}); return err }, false},
		{"watch Secrets in " + other, func() error { return watches(ctx, sa.CoreV1().Secrets(other).Watch) }, false},
		{"list Secrets cluster-wide", func() error { _, err := sa.CoreV1().Secrets("").List(ctx, metav1.ListOptions{}); return err }, false},
		{"watch Secrets cluster-wide", func() error { return watches(ctx, sa.CoreV1().Secrets("").Watch) }, false},
		{"list ConfigMaps cluster-wide", func() error { _, err := sa.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{}); return err }, false},
		{"create, update and delete a handshake ConfigMap in " + rel, func() error { return handshakeConfigMapRoundTrip(ctx, sa, rel) }, true},
	} {
		err := tc.call()
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s as %s: %v, want allowed", tc.what, user, err)
		case !tc.ok && !apierrors.IsForbidden(err):
			t.Errorf("%s as %s: error %v, want Forbidden", tc.what, user, err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	t.Log("tlsplane as that ServiceAccount, --namespaces a,b")
	// A policy in c, which tlsplane may not read, must not be served.
	createService(t, c, other, "pay")
	createCAConfigMap(t, c, other, "ca", string(harness.NewAuthority(t, "unwatched CA").PEM))
	createPolicy(t, c, policy(other, "pay", "pay", "", "ca", "pay.example.com"))
	started := time.Now()
	cp := startTLSPlane(t, "tlsplane", kubeconfig, "--namespaces", a+","+b,
		"--leader-election-namespace", rel, "--leader-election-id", release)
	ready := time.Since(started)
	createService(t, c, a, "pay")
	createCAConfigMap(t, c, a, "ca", string(harness.NewAuthority(t, "namespace a CA").PEM))
	createPolicy(t, c, policy(a, "pay", "pay", "", "ca", "pay.example.com"))
	created := time.Now()
	expectStatus(t, c, a, "pay", acceptedTrue, resolvedTrue)
	accepted := time.Since(created)
	expectServedCA(t, cp, a, "namespace a CA")
	if errs := cp.metricSum(t, "tlsplane_kube_watch_errors_total"); errs != "0" {
		t.Errorf("tlsplane_kube_watch_errors_total = %s, want 0: some list or watch was refused", errs)
	}
	if p := getPolicy(t, c, other, "pay"); len(p.Status.Ancestors) != 0 {
		t.Errorf("BackendTLSPolicy %s/pay has a status, though tlsplane may not read it: %+v", other, p.Status)
	}
	t.Logf("tlsplane ready %s after start, the policy in %s Accepted %s after its creation and its CA served",
		ready.Round(time.Millisecond), a, accepted.Round(time.Millisecond))
}

// releaseServiceAccount returns a kubeconfig with a token of the chart's
// ServiceAccount rel/name, and a client that uses that token.
func releaseServiceAccount(t *testing.T, c clients, rel, name string) (string, kubernetes.Interface) {
	t.Helper()
	expiry := int64(3600)
	tok, err := c.kube.CoreV1().ServiceAccounts(rel).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for ServiceAccount %s/%s: %v", rel, name, err)
	}
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := api.WriteKubeconfig(path, name, tok.Status.Token); err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(api.Config)
	cfg.BearerToken = tok.Status.Token
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return path, client
}

// handshakeConfigMapRoundTrip does in ns what a replica does with its
// handshake ConfigMap: create, read, update, list, watch and delete it.
func handshakeConfigMapRoundTrip(ctx context.Context, client kubernetes.Interface, ns string) error {
	cms := client.CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "handshakes-rbac-check"}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	cm.Data = map[string]string{"windows": "{}"}
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return err
	}
	if _, err := cms.Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
		return err
	}
	if _, err := cms.List(ctx, metav1.ListOptions{}); err != nil {
		return err
	}
	if err := watches(ctx, cms.Watch); err != nil {
		return err
	}
	return cms.Delete(ctx, cm.Name, metav1.DeleteOptions{})
}

// listsSecret lists the Secrets of ns and fails unless name is among them.
func listsSecret(ctx context.Context, client kubernetes.Interface, ns, name string) error {
	l, err := client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, s := range l.Items {
		if s.Name == name {
			return nil
		}
	}
	return fmt.Errorf("Secret %s/%s not in the list of %d", ns, name, len(l.Items))
}

// watches opens a watch and closes it at once.
func watches(ctx context.Context, watch func(context.Context, metav1.ListOptions) (watchpkg.Interface, error)) error {
	w, err := watch(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	w.Stop()
	return nil
}
