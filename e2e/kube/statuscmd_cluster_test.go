package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// statusRun is one run of a status command: its output and how it ended.
type statusRun struct {
	stdout, stderr string
	err            error
}

// runCommand runs cmd (bounded) with env added to this process's.
func runCommand(cmd *exec.Cmd, env ...string) statusRun {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	c.Env = append(append(os.Environ(), "KUBECONFIG="), env...) // never the user's kubeconfig
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	return statusRun{stdout.String(), stderr.String(), err}
}

// statusPodManifests are the quickstart's payments Service, CA and
// BackendTLSPolicy, which a tlsplane Pod serves from a directory.
func statusPodManifests(t *testing.T) map[string]string {
	t.Helper()
	data := map[string]string{}
	for _, f := range []string{"payments.yaml", "payments-tls.yaml", "ca-configmap.yaml"} {
		b, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "examples", "quickstart", f))
		if err != nil {
			t.Fatal(err)
		}
		data[f] = string(b)
	}
	return data
}

// tlsplanePod is a Pod as the chart's: its labels, its named admin port,
// tlsplane serve reading a directory from a ConfigMap (no API server
// credentials needed inside the Pod).
func tlsplanePod(ns, name, image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
			"app.kubernetes.io/name": "tlsplane", "app.kubernetes.io/instance": "tlsplane"}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: new(false),
			Containers: []corev1.Container{{
				Name: "tlsplane", Image: image,
				Args: []string{"serve", "--dir", "/etc/tlsplane/manifests", "--insecure-xds",
					"--xds-address", "0.0.0.0:18000", "--admin-address", "0.0.0.0:19000"},
				Ports: []corev1.ContainerPort{
					{Name: "xds", ContainerPort: 18000, Protocol: corev1.ProtocolTCP},
					{Name: "admin", ContainerPort: 19000, Protocol: corev1.ProtocolTCP},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "manifests", MountPath: "/etc/tlsplane/manifests", ReadOnly: true}},
			}},
			Volumes: []corev1.Volume{{Name: "manifests", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "tlsplane-manifests"}}}}},
		},
	}
}

// TestStatusCommandThroughAPIServer (issue 38): with tlsplane running as a Pod
// on the agent's Node, `tlsplane status --kubeconfig K -n NS` finds the
// Ready Pod (not the Pending one beside it), port-forwards to its admin
// port through the real API server and the agent's kubelet endpoint, and
// prints what `tlsplane status --admin` prints inside the Pod; so does
// the binary named kubectl-tlsplane, run directly and (when a kubectl is
// installed) by kubectl as its plugin. A namespace without tlsplane and a
// user without pods/portforward get errors naming what is missing.
func TestStatusCommandThroughAPIServer(t *testing.T) {
	c := adminClients(t)
	agent := startNodeAgent(t, c)
	ns := newNamespace(t, c)
	ctx := context.Background()
	if _, err := c.kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tlsplane-manifests"},
		Data: statusPodManifests(t)}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A replica the agent cannot run stays Pending: status must pass it by.
	if _, err := c.kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.kube.CoreV1().Pods(ns).Create(ctx, tlsplanePod(ns, "tlsplane-pending", "example.com/not-runnable:v1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deletePod(t, c, ns, "tlsplane-pending") })
	pod := runPod(t, c, tlsplanePod(ns, "tlsplane-0", tlsplaneImage+":e2e"))

	// An Envoy of fleet shop on the Pod's xDS port, so the connections
	// view has a row to show.
	// The agent reports a Pod Ready once its process runs (no probes), so
	// wait for the listener.
	xdsAddr := net.JoinHostPort(pod.Status.PodIP, "18000")
	eventually(t, 30*time.Second, "tlsplane's xDS listener in the Pod", func() error {
		conn, err := net.DialTimeout("tcp", xdsAddr, time.Second)
		if err == nil {
			conn.Close()
		}
		return err
	})
	client := harness.DialADS(t, xdsAddr, "status-envoy", "shop")
	client.ACK(t, client.RecvCluster(t, "shop/payments/8443", 60*time.Second))

	inPod := func(args ...string) statusRun {
		t.Helper()
		cmd, err := agent.PodCommand(ns, pod.Name, append(append([]string{tlsplaneBin, "status"}, args...), "--admin", "127.0.0.1:19000")...)
		if err != nil {
			t.Fatal(err)
		}
		return runCommand(cmd)
	}
	kubeconfig := "--kubeconfig=" + api.Kubeconfig
	viaCluster := func(args ...string) statusRun {
		return runCommand(exec.Command(tlsplaneBin, append(append([]string{"status"}, args...), kubeconfig, "-n", ns)...))
	}
	plugin := filepath.Join(t.TempDir(), "kubectl-tlsplane")
	if err := os.Symlink(tlsplaneBin, plugin); err != nil {
		t.Fatal(err)
	}
	viaPlugin := func(args ...string) statusRun {
		// As kubectl runs it for `kubectl tlsplane status ...`, the
		// kubeconfig from KUBECONFIG.
		return runCommand(exec.Command(plugin, append([]string{"status"}, append(args, "-n", ns)...)...), "KUBECONFIG="+api.Kubeconfig)
	}

	// The policy view has no clock in it: the three print the same bytes.
	policyArgs := []string{"policy", "shop/payments"}
	want := inPod(policyArgs...)
	if want.err != nil {
		t.Fatalf("tlsplane status policy --admin in the Pod: %v: %s", want.err, want.stderr)
	}
	for _, part := range []string{"BackendTLSPolicy shop/payments", "Service shop/payments:https", "\nCLUSTERS\nshop/payments/8443\n"} {
		if !strings.Contains(want.stdout, part) {
			t.Fatalf("tlsplane status policy --admin lacks %q:\n%s", part, want.stdout)
		}
	}
	for _, condition := range []string{"Accepted", "ResolvedRefs"} {
		if !hasRow(want.stdout, condition, "True", condition) {
			t.Fatalf("tlsplane status policy --admin has no row %s True %s:\n%s", condition, condition, want.stdout)
		}
	}
	chose := fmt.Sprintf("tlsplane status: Pod %s/tlsplane-0, admin port 19000: Running and Ready (1 of 2 Pods Ready)\n", ns)
	for name, got := range map[string]statusRun{"tlsplane status --kubeconfig": viaCluster(policyArgs...), "kubectl-tlsplane status": viaPlugin(policyArgs...)} {
		if got.err != nil {
			t.Fatalf("%s policy: %v: %s", name, got.err, got.stderr)
		}
		if got.stdout != want.stdout {
			t.Errorf("%s policy printed\n%s\nwant (as --admin in the Pod)\n%s", name, got.stdout, want.stdout)
		}
		if got.stderr != chose {
			t.Errorf("%s policy: stderr %q, want %q", name, got.stderr, chose)
		}
	}

	// kubectl finds the plugin on PATH and runs it for `kubectl tlsplane`.
	if kubectl, err := exec.LookPath("kubectl"); err != nil {
		t.Logf("no kubectl on PATH: `kubectl tlsplane status` not run (kubectl-tlsplane was run directly above)")
	} else {
		got := runCommand(exec.Command(kubectl, append([]string{"tlsplane", "status"}, append(policyArgs, "-n", ns)...)...),
			"KUBECONFIG="+api.Kubeconfig, "PATH="+filepath.Dir(plugin)+string(os.PathListSeparator)+os.Getenv("PATH"))
		if got.err != nil || got.stdout != want.stdout || got.stderr != chose {
			t.Errorf("kubectl tlsplane status policy: %v\nstdout\n%s\nstderr %q; want\n%s", got.err, got.stdout, got.stderr, want.stdout)
		}
	}

	// Every view goes through the forward: an XBackend without status is
	// the admin server's answer, the same either way.
	xWant, xGot := inPod("xbackend", "shop/none"), viaCluster("xbackend", "shop/none")
	const noX = "XBackend shop/none: no status; tlsplane reports on no XBackend in namespace \"shop\""
	if xWant.err == nil || xGot.err == nil || !strings.Contains(xWant.stderr, noX) || !strings.Contains(xGot.stderr, noX) {
		t.Errorf("status xbackend shop/none: --admin %v %q; through the API server %v %q; want both to fail with %q", xWant.err, xWant.stderr, xGot.err, xGot.stderr, noX)
	}

	// The connections view without its clock: the same Envoys, peers,
	// versions and states.
	connections := func(name string, r statusRun) string {
		t.Helper()
		if r.err != nil {
			t.Fatalf("%s -o json: %v: %s", name, r.err, r.stderr)
		}
		var doc struct {
			Connections []struct {
				Node, Fleet, API, Peer string
				Types                  []struct{ TypeURL, State, Sent, Acked string }
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatalf("%s -o json: %v\n%s", name, err, r.stdout)
		}
		return fmt.Sprintf("%+v", doc.Connections)
	}
	wantConns := connections("tlsplane status --admin in the Pod", inPod("-o", "json"))
	if !strings.Contains(wantConns, "Node:status-envoy Fleet:shop") || !strings.Contains(wantConns, "State:SYNCED") {
		t.Fatalf("tlsplane status -o json --admin lacks the Envoy or its SYNCED CDS: %s", wantConns)
	}
	for name, got := range map[string]statusRun{"tlsplane status --kubeconfig": viaCluster("-o", "json"), "kubectl-tlsplane status": viaPlugin("-o", "json")} {
		if g := connections(name, got); g != wantConns {
			t.Errorf("%s -o json shows\n%s\nwant\n%s", name, g, wantConns)
		}
	}
	table := viaCluster()
	if table.err != nil || !strings.Contains(table.stdout, "status-envoy") || !strings.Contains(table.stdout, "SYNCED") {
		t.Errorf("tlsplane status table through the API server: %v: %s\n%s", table.err, table.stderr, table.stdout)
	}

	// A port nothing listens on in the Pod: the forward opens, the
	// connection through it is refused inside the Pod, and the agent's
	// error comes back on the port's error stream.
	closedPort := viaCluster("--admin-port", "9")
	t.Logf("--admin-port 9: %v\n%s", closedPort.err, closedPort.stderr)
	if closedPort.err == nil || !strings.Contains(closedPort.stderr, "admin server of Pod "+ns+"/tlsplane-0 port 9 unreachable through the port-forward") ||
		!strings.Contains(closedPort.stderr, "dial tcp 127.0.0.1:9: connect: connection refused") {
		t.Errorf("status --admin-port 9: %v: %q", closedPort.err, closedPort.stderr)
	}

	// A namespace without tlsplane.
	empty := newNamespace(t, c)
	got := runCommand(exec.Command(tlsplaneBin, "status", kubeconfig, "-n", empty))
	wantErr := fmt.Sprintf(`no Pod matches selector "app.kubernetes.io/name=tlsplane" in namespace %s`, empty)
	if got.err == nil || !strings.Contains(got.stderr, wantErr) {
		t.Errorf("status in %s: %v: %q, want %q", empty, got.err, got.stderr, wantErr)
	}

	// A namespace whose only tlsplane Pod cannot run: each Pod and why.
	stuck := newNamespace(t, c)
	if _, err := c.kube.CoreV1().ServiceAccounts(stuck).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.kube.CoreV1().Pods(stuck).Create(ctx, tlsplanePod(stuck, "tlsplane-stuck", "example.com/not-runnable:v1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deletePod(t, c, stuck, "tlsplane-stuck") })
	wantErr = fmt.Sprintf(`no Pod matching selector "app.kubernetes.io/name=tlsplane" in namespace %s is Running and Ready: tlsplane-stuck (Pending: ImageNotKnown)`, stuck)
	eventually(t, 20*time.Second, "status names the Pending Pod", func() error {
		got := runCommand(exec.Command(tlsplaneBin, "status", kubeconfig, "-n", stuck))
		if got.err == nil || !strings.Contains(got.stderr, wantErr) {
			return fmt.Errorf("%v: %q, want %q", got.err, got.stderr, wantErr)
		}
		return nil
	})

	// Users who may list Pods but not (fully) forward their ports: the
	// verbs missing are named.
	podsRead := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}
	forwardGet := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/portforward"}, Verbs: []string{"get"}}
	var viewerErr string
	for _, tc := range []struct {
		user    string
		rules   []rbacv1.PolicyRule
		missing string
	}{
		{"pod-viewer", []rbacv1.PolicyRule{podsRead}, "get and create"},
		{"forward-getter", []rbacv1.PolicyRule{podsRead, forwardGet}, "create"},
	} {
		got := runCommand(exec.Command(tlsplaneBin, "status", "--kubeconfig", roleKubeconfig(t, c, ns, tc.user, tc.rules...), "-n", ns))
		wantErr := fmt.Sprintf("RBAC forbids %s pods/portforward in namespace %s (Pod tlsplane-0)", tc.missing, ns)
		if got.err == nil || !strings.Contains(got.stderr, wantErr) {
			t.Errorf("status as %s: %v: %q, want %q", tc.user, got.err, got.stderr, wantErr)
		}
		var exit *exec.ExitError
		if !errors.As(got.err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("status as %s: exit %v, want 1", tc.user, got.err)
		}
		viewerErr += got.stderr
	}
	t.Logf("tlsplane status through the API server:\n%s%s\nas users without pods/portforward:\n%s", table.stderr, table.stdout, viewerErr)
}

// roleKubeconfig is a kubeconfig of ServiceAccount ns/name, granted rules
// in ns by a Role and nothing else.
func roleKubeconfig(t *testing.T, c clients, ns, name string, rules ...rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	_, err := c.kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err == nil {
		_, err = c.kube.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{})
	}
	if err == nil {
		_, err = c.kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}}, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	expiry := int64(3600)
	tok, err := c.kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := api.WriteKubeconfig(path, name, tok.Status.Token); err != nil {
		t.Fatal(err)
	}
	return path
}

// hasRow says a line of table holds cells, in order, one after another.
func hasRow(table string, cells ...string) bool {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		for i := 0; i+len(cells) <= len(f); i++ {
			if slices.Equal(f[i:i+len(cells)], cells) {
				return true
			}
		}
	}
	return false
}
