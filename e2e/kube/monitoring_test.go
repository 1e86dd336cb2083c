package kube

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tlsplane/tlsplane/e2e/harness"
	"github.com/tlsplane/tlsplane/e2e/monitoring"
)

// TestHelmChartMonitoring renders the chart's Grafana dashboard ConfigMap
// and PrometheusRule: neither by default; enabled, the ConfigMap carries
// the sidecar's label and dashboards/tlsplane.json byte for byte, and the
// PrometheusRule's spec is rules/tlsplane.rules.yaml (which e2e/monitoring
// tests). The ConfigMap is applied to the API server; the PrometheusRule
// is not (no Prometheus Operator CRD here). Lint passes with both on, and
// the schema refuses values of the wrong shape.
func TestHelmChartMonitoring(t *testing.T) {
	for _, o := range helmTemplate(t, "tlsplane", "tlsplane-system") {
		if o.GetKind() == "ConfigMap" || o.GetKind() == "PrometheusRule" {
			t.Errorf("the defaults render %s", objectKey(o))
		}
	}

	c := adminClients(t)
	ns := newNamespace(t, c)
	grafana := ns + "-grafana"
	createNamespace(t, c, grafana)
	values := valuesFile(t, `
grafanaDashboard:
  enabled: true
  labels: {grafana_dashboard: "tlsplane"}
  annotations: {grafana_folder: Networking}
  namespace: `+grafana+`
prometheusRule:
  enabled: true
  labels: {release: kube-prometheus-stack}
`)
	out, err := helm(t, "lint", "--strict", chartDir(), "--namespace", ns, "--values", values)
	if err != nil || !bytes.Contains(out, []byte("0 chart(s) failed")) || bytes.Contains(out, []byte("[")) {
		t.Errorf("helm lint --strict with the dashboard and rules: %v\n%s", err, out)
	}
	rendered := helmTemplate(t, "edge-plane", ns, values)
	byKey := map[string]*unstructured.Unstructured{}
	for _, o := range rendered {
		byKey[objectKey(o)] = o
	}

	cm := byKey["ConfigMap "+grafana+"/edge-plane-dashboard"]
	if cm == nil {
		t.Fatalf("no ConfigMap %s/edge-plane-dashboard among %d objects", grafana, len(rendered))
	}
	dashboard, err := os.ReadFile(filepath.Join(chartDir(), "dashboards", "tlsplane.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(cm.Object, "data", "tlsplane.json"); got != string(dashboard) {
		t.Errorf("ConfigMap data tlsplane.json (%d bytes) is not dashboards/tlsplane.json (%d bytes)", len(got), len(dashboard))
	}
	if got := cm.GetLabels(); got["grafana_dashboard"] != "tlsplane" || got["app.kubernetes.io/instance"] != "edge-plane" {
		t.Errorf("ConfigMap labels %v: want grafana_dashboard=tlsplane and the release's", got)
	}
	if got := cm.GetAnnotations(); got["grafana_folder"] != "Networking" {
		t.Errorf("ConfigMap annotations %v: want grafana_folder=Networking", got)
	}

	rule := byKey["PrometheusRule "+ns+"/edge-plane"]
	if rule == nil {
		t.Fatalf("no PrometheusRule %s/edge-plane", ns)
	}
	if rule.GetAPIVersion() != "monitoring.coreos.com/v1" || rule.GetLabels()["release"] != "kube-prometheus-stack" {
		t.Errorf("PrometheusRule %s, labels %v: want monitoring.coreos.com/v1 and release=kube-prometheus-stack", rule.GetAPIVersion(), rule.GetLabels())
	}
	rulesYAML, err := os.ReadFile(filepath.Join(chartDir(), "rules", "tlsplane.rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := yaml.Unmarshal(rulesYAML, &want); err != nil {
		t.Fatal(err)
	}
	if w, g := mustJSON(t, want), mustJSON(t, rule.Object["spec"]); w != g {
		wl, gl := strings.Split(indentJSON(t, w), "\n"), strings.Split(indentJSON(t, g), "\n")
		for i := range min(len(wl), len(gl)) {
			if wl[i] != gl[i] {
				t.Errorf("PrometheusRule spec differs from rules/tlsplane.rules.yaml at line %d (as JSON): file %q, rendered %q", i+1, strings.TrimSpace(wl[i]), strings.TrimSpace(gl[i]))
				break
			}
		}
		if len(wl) != len(gl) {
			t.Errorf("PrometheusRule spec: %d lines (as JSON), rules/tlsplane.rules.yaml %d", len(gl), len(wl))
		}
	}

	// The API server validates and stores the ConfigMap.
	applied := applyRendered(t, []*unstructured.Unstructured{cm})
	if applied["ConfigMap "+grafana+"/edge-plane-dashboard"] == nil {
		t.Errorf("the API server did not answer for the ConfigMap: %v", applied)
	}

	for _, tc := range []struct{ values, wantErr string }{
		{"grafanaDashboard: {enabled: yes please}\n", "at '/grafanaDashboard/enabled': got string, want boolean"},
		{"grafanaDashboard: {enabled: true, labels: {grafana_dashboard: 1}}\n", "at '/grafanaDashboard/labels/grafana_dashboard': got number, want string"},
		{"grafanaDashboard: {enabled: true, namespace: Monitoring}\n", "at '/grafanaDashboard/namespace'"},
		{"prometheusRule: {enable: true}\n", "additional properties 'enable' not allowed"},
	} {
		_, err := helm(t, "template", "bad", chartDir(), "--namespace", ns, "--values", valuesFile(t, tc.values))
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("values %q: error %v, want one naming %q", tc.values, err, tc.wantErr)
		}
	}
}

func indentJSON(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(s), "", "  "); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestMonitoringMetricsInKubernetesMode checks, on a tlsplane watching the
// real API server with leader election, the metric families e2e/monitoring
// cannot see in directory mode (monitoring.KubernetesOnly) and the
// dashboard and rules use. A vector shows only once it has a series, so
// the test makes each happen: tlsplane starts with a ServiceAccount that
// may not list Secrets (watch errors), is granted them once the error
// shows, then writes a policy's status.
func TestMonitoringMetricsInKubernetesMode(t *testing.T) {
	c := adminClients(t)
	ns := newNamespace(t, c)
	applyDeploy(t, "namespace.yaml", false)
	applyDeploy(t, "rbac.yaml", false)
	ctx := context.Background()

	// deploy/'s ClusterRole without Secrets, then with them.
	full, err := c.kube.RbacV1().ClusterRoles().Get(ctx, "tlsplane", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	partial := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-no-secrets"}}
	for _, r := range full.Rules {
		r.Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(res string) bool { return res == "secrets" })
		if len(r.Resources) > 0 {
			partial.Rules = append(partial.Rules, r)
		}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "watcher"}}
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}}
	// bind binds role to the ServiceAccount; its error, not t's: it also
	// runs on a goroutine while tlsplane starts.
	bind := func(name, role string) error {
		crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role}}
		_, err := c.kube.RbacV1().ClusterRoleBindings().Create(context.Background(), crb, metav1.CreateOptions{})
		return err
	}
	for _, name := range []string{ns + "-no-secrets", ns + "-full"} {
		t.Cleanup(func() {
			_ = c.kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	if _, err := c.kube.RbacV1().ClusterRoles().Create(ctx, partial, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.kube.RbacV1().ClusterRoles().Delete(context.Background(), partial.Name, metav1.DeleteOptions{})
	})
	if _, err := c.kube.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := bind(ns+"-no-secrets", partial.Name); err != nil {
		t.Fatal(err)
	}
	lease := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "tlsplane-system", Name: ns + "-leader-election"}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "tlsplane-leader-election"}}
	if _, err := c.kube.RbacV1().RoleBindings("tlsplane-system").Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.kube.RbacV1().RoleBindings("tlsplane-system").Delete(context.Background(), lease.Name, metav1.DeleteOptions{})
	})
	expiry := int64(3600)
	tok, err := c.kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "watcher.kubeconfig")
	if err := api.WriteKubeconfig(kubeconfig, "watcher", tok.Status.Token); err != nil {
		t.Fatal(err)
	}

	// tlsplane is not ready before its Secrets informer syncs: grant
	// Secrets once the watch error shows, while StartTLSPlane waits.
	admin := harness.FreePort(t)
	granted := make(chan error, 1)
	go func() {
		err := harness.Eventually(60*time.Second, 200*time.Millisecond, func() error {
			body, err := harness.HTTPGet("http://127.0.0.1:" + strconv.Itoa(admin) + "/metrics")
			if err != nil {
				return err
			}
			if !families(body)["tlsplane_kube_watch_errors_total"] {
				return errors.New("no tlsplane_kube_watch_errors_total in /metrics")
			}
			return nil
		})
		if err == nil {
			err = bind(ns+"-full", "tlsplane")
		}
		granted <- err
	}()
	p := harness.StartTLSPlane(t, harness.TLSPlaneOptions{
		Bin: tlsplaneBin, LogDir: t.TempDir(), Name: "tlsplane", AdminPort: admin,
		Args:         append([]string{"--kubeconfig", kubeconfig, "--namespaces", ns}, leaseFlags(ns)...),
		Env:          []string{"POD_NAME=monitoring"},
		ReadyTimeout: 90 * time.Second,
	})
	showLogOnFailure(t, p.Process, 20*time.Second, 6000)
	if err := <-granted; err != nil {
		t.Fatalf("granting Secrets once a watch error showed: %v", err)
	}
	cp := &controlPlane{TLSPlane: p, name: "tlsplane", xds: p.XDSAddress()}

	createService(t, c, ns, "pay")
	createCAConfigMap(t, c, ns, "pay-ca", string(harness.NewAuthority(t, "monitoring CA").PEM))
	createPolicy(t, c, policy(ns, "pay", "pay", "", "pay-ca", "pay.example.com"))
	expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)

	eventually(t, statusWait, "every Kubernetes-mode family in /metrics", func() error {
		body, err := cp.get("/metrics")
		if err != nil {
			return err
		}
		have := families(body)
		var missing []string
		for _, f := range monitoring.KubernetesOnly {
			if _, ok := have[f]; !ok {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("missing %q", missing)
		}
		return nil
	})
	if w := cp.metricSum(t, "tlsplane_status_writes_total", `result="written"`); w == "0" {
		t.Errorf("tlsplane_status_writes_total{result=\"written\"} = 0 after a policy's status was written")
	}
}

// families are the metric names with a sample in an exposition.
func families(body []byte) map[string]bool {
	out := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			out[line[:i]] = true
		}
	}
	return out
}
