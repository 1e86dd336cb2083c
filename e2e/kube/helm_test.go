package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
	"github.com/tlsplane/tlsplane/e2e/harness"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// chartDir is charts/tlsplane of this checkout.
func chartDir() string {
	return filepath.Join(harness.RepoRoot(), "charts", "tlsplane")
}

// helm runs the helm CLI with a home of its own (no user configuration, no
// repositories) and returns its stdout; stderr comes back in the error.
func helm(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(harness.HelmBin(t), args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("helm %s: %w\n%s%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes(), nil
}

// helmTemplate renders charts/tlsplane as release name in namespace ns.
func helmTemplate(t *testing.T, name, ns string, values ...string) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"template", name, chartDir(), "--namespace", ns}
	for _, v := range values {
		args = append(args, "--values", v)
	}
	out, err := helm(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := apiserver.DecodeManifest(out)
	if err != nil {
		t.Fatalf("helm template %s: %v", name, err)
	}
	return objs
}

// valuesFile writes values (YAML) to a file for --values.
func valuesFile(t *testing.T, values string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, []byte(values), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func objectKey(o *unstructured.Unstructured) string {
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

// encode turns objects back into one YAML stream for apiserver.Apply.
func encode(t *testing.T, objs []*unstructured.Unstructured) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, o := range objs {
		data, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteString("\n")
	}
	return b.Bytes()
}

// workloadKinds are applied as a server-side dry run, as deploy/ is: no
// kubelet or controllers run here.
var workloadKinds = []string{"Deployment", "Service", "PodDisruptionBudget"}

// applyRendered applies a rendered chart to the API server: RBAC for real,
// workloads as a dry run. It returns what the API server answered, by key.
func applyRendered(t *testing.T, objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	var real, dry []*unstructured.Unstructured
	for _, o := range objs {
		if slices.Contains(workloadKinds, o.GetKind()) {
			dry = append(dry, o)
		} else {
			real = append(real, o)
		}
	}
	got := map[string]*unstructured.Unstructured{}
	for _, part := range []struct {
		objs   []*unstructured.Unstructured
		dryRun bool
	}{{real, false}, {dry, true}} {
		applied, err := apiserver.Apply(context.Background(), api.Config, encode(t, part.objs), part.dryRun)
		if err != nil {
			t.Fatalf("apply the rendered chart (dry run %v): %v", part.dryRun, err)
		}
		for _, o := range applied {
			got[objectKey(o)] = o
		}
	}
	return got
}

// TestHelmLint runs `helm lint --strict` on charts/tlsplane, with its
// defaults and with every value set, and fails on any finding, INFO
// included.
func TestHelmLint(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []string
	}{
		{"defaults", nil},
		{"every value set", []string{valuesFile(t, everyValue)}},
		{"the provisioner", []string{valuesFile(t, "provisioner: {enabled: true, namespaces: [gateways, shop], deniedKeys: [eks.amazonaws.com/*]}\n")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"lint", "--strict", chartDir(), "--namespace", "tlsplane-system"}
			for _, v := range tc.values {
				args = append(args, "--values", v)
			}
			out, err := helm(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			if findings := regexp.MustCompile(`(?m)^\[(INFO|WARNING|ERROR)\].*$`).FindAll(out, -1); len(findings) > 0 {
				t.Errorf("helm lint --strict: %d finding(s):\n%s", len(findings), bytes.Join(findings, []byte("\n")))
			}
			if !bytes.Contains(out, []byte("1 chart(s) linted, 0 chart(s) failed")) {
				t.Errorf("helm lint --strict: no success line:\n%s", out)
			}
		})
	}
}

// TestHelmChartMatchesDeploy renders charts/tlsplane with its default values
// as `helm install tlsplane charts/tlsplane -n tlsplane-system` would and
// compares the parsed objects with deploy/'s, field by field, nothing
// ignored. The one difference is deploy/namespace.yaml: the chart does not
// render its own namespace (`helm install --create-namespace` does). Then
// it applies the rendered objects to the API server, as
// TestDeployManifestsApply applies deploy/.
func TestHelmChartMatchesDeploy(t *testing.T) {
	rendered := helmTemplate(t, "tlsplane", "tlsplane-system")

	want := map[string]*unstructured.Unstructured{}
	for _, file := range []string{"rbac.yaml", "deployment.yaml", "pdb.yaml"} {
		data, err := os.ReadFile(filepath.Join(deployDir(), file))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := apiserver.DecodeManifest(data)
		if err != nil {
			t.Fatalf("deploy/%s: %v", file, err)
		}
		for _, o := range objs {
			want[objectKey(o)] = o
		}
	}
	got := map[string]*unstructured.Unstructured{}
	for _, o := range rendered {
		k := objectKey(o)
		if _, dup := got[k]; dup {
			t.Errorf("the chart renders %s twice", k)
		}
		got[k] = o
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("deploy/ has %s, the chart does not render it", k)
			continue
		}
		wj, _ := json.MarshalIndent(w.Object, "", "  ")
		gj, _ := json.MarshalIndent(g.Object, "", "  ")
		if !bytes.Equal(wj, gj) {
			t.Errorf("%s differs between deploy/ and the chart: %s", k, firstDifference(string(wj), string(gj)))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("the chart renders %s, deploy/ does not have it", k)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	applyDeploy(t, "namespace.yaml", false)
	applied := applyRendered(t, rendered)
	if len(applied) != len(rendered) {
		t.Fatalf("applied %d objects, rendered %d", len(applied), len(rendered))
	}
}

// firstDifference shows the first line where two indented JSON documents part.
func firstDifference(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d: deploy/ %q, chart %q", i+1, strings.TrimSpace(w), strings.TrimSpace(g))
		}
	}
	return "(no line differs)"
}

// everyValue sets every value of charts/tlsplane away from its default.
const everyValue = `
replicas: 3
image:
  repository: registry.example/team/tlsplane
  tag: v1.2.3
  pullPolicy: IfNotPresent
namespaces: [shop, pay]
controllerName: example.com/edge-tls
fleetNamespaces:
  internal: [ops]
  edge: [shop, pay]
fleetScope: all
xbackendHostnames: [api.stripe.com, "*.partner.example"]
xds:
  tlsSecretName: edge-xds-certs
  handshakeTimeout: 3s
  maxConnections: 1000
  maxConnectionsPerSource: 100
  maxHandshakes: 200
  maxHandshakesPerSource: 20
leaderElection:
  enabled: true
  id: edge-status-writer
  leaseDuration: 30s
  renewDeadline: 20s
  retryPeriod: 4s
log:
  format: text
  level: debug
extraArgs: [--kube-api-qps=80]
resources:
  requests: {cpu: 250m, memory: 256Mi}
  limits: {cpu: "1", memory: 1Gi}
podDisruptionBudget:
  minAvailable: 2
nodeSelector:
  kubernetes.io/os: linux
tolerations:
  - {key: dedicated, operator: Equal, value: edge, effect: NoSchedule}
`

// TestHelmChartValues renders the chart with every value changed, checks
// that each shows up where it should, applies the result to the API server
// (the Deployment as a dry run, so the API server validates and defaults
// it), and checks that tlsplane accepts the rendered arguments.
func TestHelmChartValues(t *testing.T) {
	c := adminClients(t)
	ns := newNamespace(t, c)
	// The watched namespaces get a Role each: they must exist.
	shop, pay := ns+"-shop", ns+"-pay"
	createNamespace(t, c, shop)
	createNamespace(t, c, pay)
	rendered := helmTemplate(t, "edge-plane", ns, valuesFile(t, everyValue), valuesFile(t, fmt.Sprintf("namespaces: [%s, %s]\n", shop, pay)))
	applied := applyRendered(t, rendered)

	var keys []string
	for _, o := range rendered {
		keys = append(keys, objectKey(o))
	}
	slices.Sort(keys)
	wantKeys := []string{
		"ClusterRole /edge-plane", "ClusterRoleBinding /edge-plane",
		"Deployment " + ns + "/edge-plane", "PodDisruptionBudget " + ns + "/edge-plane",
		"Role " + ns + "/edge-plane-leader-election", "Role " + pay + "/edge-plane", "Role " + shop + "/edge-plane",
		"RoleBinding " + ns + "/edge-plane-leader-election", "RoleBinding " + pay + "/edge-plane", "RoleBinding " + shop + "/edge-plane",
		"Service " + ns + "/edge-plane-xds", "ServiceAccount " + ns + "/edge-plane",
	}
	slices.Sort(wantKeys)
	if !slices.Equal(keys, wantKeys) {
		t.Fatalf("rendered objects:\n  %s\nwant:\n  %s", strings.Join(keys, "\n  "), strings.Join(wantKeys, "\n  "))
	}

	// What the API server answered for the dry run: validated and defaulted.
	dep := applied["Deployment "+ns+"/edge-plane"]
	if dep == nil {
		t.Fatal("the API server did not answer for the Deployment")
	}
	field := func(path ...string) any {
		v, _, err := unstructured.NestedFieldNoCopy(dep.Object, path...)
		if err != nil {
			t.Fatalf("Deployment %s: %v", strings.Join(path, "."), err)
		}
		return v
	}
	if got := field("spec", "replicas"); got != int64(3) {
		t.Errorf("spec.replicas = %v, want 3", got)
	}
	pod := []string{"spec", "template", "spec"}
	containers := field(append(pod, "containers")...).([]any)
	container := containers[0].(map[string]any)
	for _, tc := range []struct {
		field string
		got   any
		want  string
	}{
		{"image", container["image"], "registry.example/team/tlsplane:v1.2.3"},
		{"imagePullPolicy", container["imagePullPolicy"], "IfNotPresent"},
		{"serviceAccountName", field(append(pod, "serviceAccountName")...), "edge-plane"},
		{"xds-tls secretName", field(append(pod, "volumes")...).([]any)[0].(map[string]any)["secret"].(map[string]any)["secretName"], "edge-xds-certs"},
		{"resources", mustJSON(t, container["resources"]), `{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"250m","memory":"256Mi"}}`},
		{"nodeSelector", mustJSON(t, field(append(pod, "nodeSelector")...)), `{"kubernetes.io/os":"linux"}`},
		{"tolerations", mustJSON(t, field(append(pod, "tolerations")...)), `[{"effect":"NoSchedule","key":"dedicated","operator":"Equal","value":"edge"}]`},
		{"selector", mustJSON(t, field("spec", "selector")), `{"matchLabels":{"app.kubernetes.io/instance":"edge-plane","app.kubernetes.io/name":"tlsplane"}}`},
	} {
		if tc.got != tc.want {
			t.Errorf("Deployment %s = %v, want %s", tc.field, tc.got, tc.want)
		}
	}
	var args []string
	for _, a := range container["args"].([]any) {
		args = append(args, a.(string))
	}
	for _, want := range []string{
		"--namespaces=" + shop + "," + pay,
		"--controller-name=example.com/edge-tls",
		"--fleet-namespaces=edge=shop,pay;internal=ops",
		"--fleet-scope=all",
		"--xbackend-hostnames=api.stripe.com,*.partner.example",
		"--leader-elect=true",
		"--leader-election-id=edge-status-writer",
		"--leader-election-lease-duration=30s",
		"--leader-election-renew-deadline=20s",
		"--leader-election-retry-period=4s",
		"--log-format=text",
		"--log-level=debug",
		"--kube-api-qps=80",
		"--xds-handshake-timeout=3s",
		"--xds-max-connections=1000",
		"--xds-max-connections-per-source=100",
		"--xds-max-handshakes=200",
		"--xds-max-handshakes-per-source=20",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("Deployment args lack %s: %q", want, args)
		}
	}
	pdb := applied["PodDisruptionBudget "+ns+"/edge-plane"]
	if got, _, _ := unstructured.NestedFieldNoCopy(pdb.Object, "spec", "minAvailable"); got != int64(2) {
		t.Errorf("PodDisruptionBudget minAvailable = %v, want 2", got)
	}
	svc := applied["Service "+ns+"/edge-plane-xds"]
	if got, _, _ := unstructured.NestedFieldNoCopy(svc.Object, "spec", "selector"); mustJSON(t, got) != `{"app.kubernetes.io/instance":"edge-plane","app.kubernetes.io/name":"tlsplane"}` {
		t.Errorf("Service selector = %v", got)
	}
	for _, key := range []string{"ClusterRoleBinding /edge-plane", "RoleBinding " + shop + "/edge-plane", "RoleBinding " + pay + "/edge-plane"} {
		if got := mustJSON(t, applied[key].Object["subjects"]); got != `[{"kind":"ServiceAccount","name":"edge-plane","namespace":"`+ns+`"}]` {
			t.Errorf("%s subjects = %s", key, got)
		}
	}

	checkServeAccepts(t, args)
}

// checkServeAccepts runs the binary under test with the rendered arguments
// and --help last: every flag before it must exist and its value parse,
// or serve exits non-zero without printing its help.
func checkServeAccepts(t *testing.T, args []string) {
	t.Helper()
	if len(args) == 0 || args[0] != "serve" {
		t.Fatalf("args do not start with serve: %q", args)
	}
	out, err := exec.Command(tlsplaneBin, append(slices.Clone(args), "--help")...).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--fleet-namespaces")) {
		t.Errorf("tlsplane %s --help: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHelmChartSingleReplica: without leader election the chart renders no
// Lease Role and no PodDisruptionBudget (minAvailable 1 of 1 would block
// every drain), passes --leader-elect=false, and refuses more than one
// replica; values of the wrong shape are refused by the chart's schema.
func TestHelmChartSingleReplica(t *testing.T) {
	c := adminClients(t)
	ns := newNamespace(t, c)
	rendered := helmTemplate(t, "solo", ns, valuesFile(t, "replicas: 1\nleaderElection: {enabled: false}\n"))
	var kinds []string
	for _, o := range rendered {
		kinds = append(kinds, o.GetKind())
	}
	slices.Sort(kinds)
	if want := []string{"ClusterRole", "ClusterRoleBinding", "Deployment", "Service", "ServiceAccount"}; !slices.Equal(kinds, want) {
		t.Errorf("rendered kinds %q, want %q", kinds, want)
	}
	applied := applyRendered(t, rendered)
	dep := applied["Deployment "+ns+"/solo"]
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	var args []string
	for _, a := range containers[0].(map[string]any)["args"].([]any) {
		args = append(args, a.(string))
	}
	if !slices.Contains(args, "--leader-elect=false") || slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--leader-election-") }) {
		t.Errorf("args %q: want --leader-elect=false and no --leader-election-* flag", args)
	}
	checkServeAccepts(t, args)

	for _, tc := range []struct{ values, wantErr string }{
		{"replicas: 2\nleaderElection: {enabled: false}\n", "leaderElection.enabled=false needs replicas: 1 (got 2)"},
		{"namespaces: shop\n", "at '/namespaces': got string, want array"},
		{"replicas: 0\n", "at '/replicas': minimum"},
		{"fleetNamespaces: {edge: [Shop]}\n", "at '/fleetNamespaces/edge/0'"},
		{"fleetScope: everything\n", "at '/fleetScope'"},
		{"leaderElection: {enabled: true, leaseDuration: 15}\n", "at '/leaderElection/leaseDuration': got number"},
		{"leaderElection: {enabled: true, retryPeriod: 2 seconds}\n", "at '/leaderElection/retryPeriod'"},
		{"controllerName: tlsplane\n", "at '/controllerName'"},
		{"replica: 3\n", "additional properties 'replica' not allowed"},
	} {
		_, err := helm(t, "template", "bad", chartDir(), "--namespace", ns, "--values", valuesFile(t, tc.values))
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("values %q: error %v, want one naming %q", tc.values, err, tc.wantErr)
		}
	}
}
