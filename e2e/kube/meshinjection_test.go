package kube

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
	"github.com/tlsplane/tlsplane/e2e/harness"
)

// The names `tlsplane inject` gives (inject.CaptureContainer, …), written
// out: this module tests the binary, not the package.
var injectedInits = []string{"tlsplane-mesh-capture", "tlsplane-mesh-bootstrap", "tlsplane-mesh-sidecar"}

// startInjector is harness.StartInjector with this package's images and
// xDS address, its log shown when the test fails.
func startInjector(t *testing.T, kubeconfig string, flags ...string) (*harness.Process, string, *harness.Authority) {
	t.Helper()
	p, addr, ca := harness.StartInjector(t, t.TempDir(), tlsplaneBin, append([]string{"--kubeconfig", kubeconfig, "--log-level", "debug",
		"--sidecar-image", "envoyproxy/envoy:e2e", "--tlsplane-image", tlsplaneImage + ":e2e",
		"--sidecar-xds-address", "tlsplane-xds.tlsplane-system.svc:18000"}, flags...)...)
	showLogOnFailure(t, p, 10*time.Second, 6000)
	return p, addr, ca
}

// registerInjector registers deploy/mesh-injection.yaml's
// MutatingWebhookConfiguration, pointed at addr by url instead of its
// Service and trusting caPEM, under a name of the test's; deleted at the
// end. Its other objects are applied as a server-side dry run: the
// Deployment would need a kubelet and a registry.
func registerInjector(t *testing.T, c clients, addr string, caPEM []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(deployDir(), "mesh-injection.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := apiserver.Apply(context.Background(), api.Config, data, true); err != nil {
		t.Fatalf("apply deploy/mesh-injection.yaml (dry run): %v", err)
	}
	cfg, err := apiserver.MutatingWebhookAt(data, "https://"+addr+"/inject", caPEM)
	if err != nil {
		t.Fatalf("deploy/mesh-injection.yaml: %v", err)
	}
	name := "tlsplane-mesh-injection-" + strconv.FormatInt(time.Now().UnixNano()%1000000, 10)
	cfg.Name = name
	ctx := context.Background()
	if _, err := c.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// injectorKubeconfig applies deploy/'s namespace and
// mesh-injection-rbac.yaml and returns a kubeconfig with a token of the
// tlsplane-mesh-injection ServiceAccount: the webhook runs with exactly
// the privileges the manifests grant.
func injectorKubeconfig(t *testing.T, c clients) string {
	t.Helper()
	applyDeploy(t, "namespace.yaml", false)
	applyDeploy(t, "mesh-injection-rbac.yaml", false)
	expiry := int64(3600)
	tok, err := c.kube.CoreV1().ServiceAccounts("tlsplane-system").CreateToken(context.Background(), "tlsplane-mesh-injection",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for ServiceAccount tlsplane-system/tlsplane-mesh-injection: %v", err)
	}
	path := filepath.Join(t.TempDir(), "mesh-injection.kubeconfig")
	if err := api.WriteKubeconfig(path, "tlsplane-mesh-injection", tok.Status.Token); err != nil {
		t.Fatal(err)
	}
	return path
}

// injectionNamespace is newNamespace with labels and its default ServiceAccount
// (no controller-manager makes it here; Pod admission requires it).
func injectionNamespace(t *testing.T, c clients, labels map[string]string) string {
	t.Helper()
	ns := newNamespace(t, c)
	ctx := context.Background()
	n, err := c.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Labels = labels
	if _, err := c.kube.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

func appPod(name string, annotations map[string]string, inits ...string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: new(false),
			Containers:                   []corev1.Container{{Name: "app", Image: "example.com/app:1"}},
		},
	}
	for _, n := range inits {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: n, Image: "example.com/init:1"})
	}
	return pod
}

func initNames(pod *corev1.Pod) []string {
	var n []string
	for _, c := range pod.Spec.InitContainers {
		n = append(n, c.Name)
	}
	return n
}

// TestMeshInjection (issue 39, milestone 3): `tlsplane inject` serves the
// webhook on loopback over TLS, registered with the real kube-apiserver
// as deploy/mesh-injection.yaml registers it (namespaceSelector
// tlsplane.io/mesh=enabled, failurePolicy Fail), under the ServiceAccount
// and ClusterRole of deploy/mesh-injection-rbac.yaml. A Pod created in a
// namespace in the mesh comes back from the API server with the capture,
// the bootstrap and the native sidecar before its own init containers,
// valid to the API server's own Pod validation; a Pod in another
// namespace, one annotated tlsplane.io/mesh: disabled, and one in a
// namespace the configuration matches but --mesh-namespaces does not (the
// handler's own check) come back unchanged; a bad excluded-ports
// annotation is refused naming it; with the webhook down, Pods of the
// mesh are refused (Fail) and Pods elsewhere are not affected.
func TestMeshInjection(t *testing.T) {
	c := adminClients(t)
	injector, addr, ca := startInjector(t, injectorKubeconfig(t, c), "--mesh-namespaces", "tlsplane.io/mesh=enabled,e2e-inject!=excluded",
		"--sidecar-identity-csi-driver", "spiffe.csi.cert-manager.io")
	registerInjector(t, c, addr, ca.PEM)
	inMesh := injectionNamespace(t, c, map[string]string{"tlsplane.io/mesh": "enabled"})
	outside := injectionNamespace(t, c, map[string]string{"team": "ops"})
	excluded := injectionNamespace(t, c, map[string]string{"tlsplane.io/mesh": "enabled", "e2e-inject": "excluded"})
	ctx := context.Background()
	create := func(ns string, pod *corev1.Pod) (*corev1.Pod, error) {
		return c.kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	}

	t.Log("a Pod of a namespace in the mesh gets the capture, the bootstrap and the native sidecar")
	// The webhook's namespace cache may not have the namespace yet: the
	// handler then reads it once, so the first Pod is already injected.
	got, err := create(inMesh, appPod("web", nil))
	if err != nil {
		t.Fatal(err)
	}
	if n := initNames(got); !slices.Equal(n, injectedInits) {
		t.Fatalf("init containers %q, want %q", n, injectedInits)
	}
	if len(got.Spec.Containers) != 1 || got.Spec.Containers[0].Name != "app" {
		t.Fatalf("containers %+v, want the Pod's own", got.Spec.Containers)
	}
	capture, boot, side := got.Spec.InitContainers[0], got.Spec.InitContainers[1], got.Spec.InitContainers[2]
	if side.RestartPolicy == nil || *side.RestartPolicy != corev1.ContainerRestartPolicyAlways || side.Image != "envoyproxy/envoy:e2e" {
		t.Fatalf("sidecar %+v: want a native sidecar of the --sidecar-image", side)
	}
	if sc := capture.SecurityContext; sc == nil || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Add, []corev1.Capability{"NET_ADMIN"}) ||
		!slices.Equal(capture.Args, []string{"capture", "--sidecar-uid", "1337", "--port", "15001"}) || capture.Image != tlsplaneImage+":e2e" {
		t.Fatalf("capture %+v: want tlsplane capture with NET_ADMIN", capture)
	}
	for _, ctr := range []corev1.Container{boot, side} {
		if sc := ctr.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 1337 {
			t.Fatalf("%s runs as %+v, want UID 1337", ctr.Name, ctr.SecurityContext)
		}
	}
	if !slices.Contains(boot.Args, "tlsplane-xds.tlsplane-system.svc:18000") || !slices.Contains(boot.Args, "sidecar-bootstrap") {
		t.Fatalf("bootstrap args %q", boot.Args)
	}
	if v := got.Spec.Volumes; len(v) != 2 || v[0].Name != "tlsplane-mesh" || v[0].EmptyDir == nil ||
		v[1].Name != "tlsplane-mesh-identity" || v[1].CSI == nil || v[1].CSI.Driver != "spiffe.csi.cert-manager.io" {
		t.Fatalf("volumes %+v, want the bootstrap's emptyDir and the workload certificate's CSI volume", got.Spec.Volumes)
	}
	if !slices.Contains(boot.Args, "/var/run/tlsplane/identity/tls.crt") {
		t.Fatalf("bootstrap args %q: want the workload certificate for xDS mutual TLS", boot.Args)
	}

	t.Log("the Pod's own init containers run after ours, in their order; excluded ports reach the capture")
	got, err = create(inMesh, appPod("migrating", map[string]string{"tlsplane.io/mesh-exclude-ports": "5432"}, "migrate", "seed"))
	if err != nil {
		t.Fatal(err)
	}
	if n, want := initNames(got), append(slices.Clone(injectedInits), "migrate", "seed"); !slices.Equal(n, want) {
		t.Fatalf("init containers %q, want %q", n, want)
	}
	if args := got.Spec.InitContainers[0].Args; !slices.Equal(args[len(args)-2:], []string{"--exclude-ports", "5432"}) {
		t.Fatalf("capture args %q, want --exclude-ports 5432", args)
	}

	t.Log("unchanged: another namespace, an annotated Pod, a namespace only the configuration matches, a Pod injected already")
	for _, tc := range []struct {
		what  string
		ns    string
		pod   *corev1.Pod
		inits []string
	}{
		{"a namespace outside the mesh", outside, appPod("web", nil), nil},
		{"annotated tlsplane.io/mesh: disabled", inMesh, appPod("opted-out", map[string]string{"tlsplane.io/mesh": "disabled"}), nil},
		{"matched by the configuration, not by --mesh-namespaces", excluded, appPod("web", nil), nil},
		{"injected already", inMesh, appPod("again", nil, "tlsplane-mesh-capture"), []string{"tlsplane-mesh-capture"}},
	} {
		got, err := create(tc.ns, tc.pod)
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		if n := initNames(got); !slices.Equal(n, tc.inits) || len(got.Spec.Volumes) != 0 {
			t.Fatalf("%s: init containers %q, volumes %+v; want the Pod as created", tc.what, n, got.Spec.Volumes)
		}
	}

	t.Log("a bad annotation is refused, naming it")
	_, err = create(inMesh, appPod("bad-ports", map[string]string{"tlsplane.io/mesh-exclude-ports": "db"}))
	if err == nil || !strings.Contains(err.Error(), `annotation tlsplane.io/mesh-exclude-ports: "db" is not a TCP port`) {
		t.Fatalf("error %v, want the refusal naming the annotation", err)
	}

	t.Log("failurePolicy Fail: with the webhook down, the mesh's Pods are refused, others are not")
	injector.Stop(10 * time.Second)
	_, err = create(inMesh, appPod("while-down", nil))
	if err == nil || !strings.Contains(err.Error(), "inject.mesh.tlsplane.io") {
		t.Fatalf("error %v, want the API server refusing the Pod because webhook inject.mesh.tlsplane.io failed", err)
	}
	if _, err := create(outside, appPod("while-down", nil)); err != nil {
		t.Fatalf("a Pod outside the mesh while the webhook is down: %v", err)
	}
}
