package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// statusPod is a tlsplane Pod of the chart, created age ago, in phase
// with Ready ready.
func statusPod(name string, age time.Duration, phase corev1.PodPhase, ready corev1.ConditionStatus) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "tlsplane-system", Labels: map[string]string{"app.kubernetes.io/name": "tlsplane"},
			CreationTimestamp: metav1.NewTime(statusNow.Add(-age))},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tlsplane", Ports: []corev1.ContainerPort{
			{Name: "xds", ContainerPort: 18000}, {Name: "admin", ContainerPort: 19000}}}}},
		Status: corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}},
	}
}

func TestChoosePod(t *testing.T) {
	old := statusPod("tlsplane-old", time.Hour, corev1.PodRunning, corev1.ConditionTrue)
	young := statusPod("tlsplane-young", time.Minute, corev1.PodRunning, corev1.ConditionTrue)
	unready := statusPod("tlsplane-unready", 2*time.Hour, corev1.PodRunning, corev1.ConditionFalse)
	pending := statusPod("tlsplane-pending", 2*time.Hour, corev1.PodPending, corev1.ConditionFalse)
	pending.Status.ContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}
	terminating := statusPod("tlsplane-terminating", 3*time.Hour, corev1.PodRunning, corev1.ConditionTrue)
	terminating.DeletionTimestamp = &metav1.Time{Time: statusNow}

	for _, tc := range []struct {
		name    string
		pods    []corev1.Pod
		leader  string
		want    string
		why     string // a part of the line
		wantErr string
	}{
		{"one Ready", []corev1.Pod{young}, "", "tlsplane-young", "Running and Ready", ""},
		{"the leader first", []corev1.Pod{old, young}, "tlsplane-young", "tlsplane-young", "holds Lease tlsplane-system/tlsplane-status-writer", ""},
		{"the oldest without a leader", []corev1.Pod{young, old}, "", "tlsplane-old", "the oldest Running and Ready (2 of 2 Pods Ready)", ""},
		{"a leader not Ready is not asked", []corev1.Pod{unready, young}, "tlsplane-unready", "tlsplane-young", "Running and Ready (1 of 2 Pods Ready)", ""},
		{"terminating and unready skipped", []corev1.Pod{terminating, unready, young}, "", "tlsplane-young", "1 of 3", ""},
		{"no Pod", nil, "", "", "", `no Pod matches selector "app.kubernetes.io/name=tlsplane" in namespace tlsplane-system`},
		{"none Ready", []corev1.Pod{pending, unready, terminating}, "", "", "",
			"is Running and Ready: tlsplane-pending (Pending: ImagePullBackOff), tlsplane-terminating (terminating), tlsplane-unready (Running, not Ready)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod, why, err := choosePod(tc.pods, defaultPodSelector, "tlsplane-system", tc.leader)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pod.Name != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("chose %s (%s), want %s (%s)", pod.Name, why, tc.want, tc.why)
			}
		})
	}
}

func TestAdminPortOf(t *testing.T) {
	pod := statusPod("tlsplane-a", time.Minute, corev1.PodRunning, corev1.ConditionTrue)
	for _, tc := range []struct {
		port    string
		want    int32
		wantErr string
	}{
		{"admin", 19000, ""},
		{"xds", 18000, ""},
		{"9901", 9901, ""},
		{"metrics", 0, `Pod tlsplane-system/tlsplane-a has no container port named "metrics" (it has ports xds, admin)`},
		{"0", 0, "--admin-port 0: not a port"},
		{"70000", 0, "--admin-port 70000: not a port"},
	} {
		got, err := adminPortOf(&pod, tc.port)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("--admin-port %s: error %v, want %q", tc.port, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("--admin-port %s: %d, %v; want %d", tc.port, got, err, tc.want)
		}
	}
}

func TestStatusNamespace(t *testing.T) {
	contexts := map[string]*clientcmdapi.Context{"prod": {Namespace: "gateways"}, "dev": {}}
	for _, tc := range []struct{ flagNS, flagContext, current, want string }{
		{"mine", "", "prod", "mine"},
		{"", "", "prod", "gateways"},
		{"", "prod", "dev", "gateways"},
		{"", "", "dev", defaultStatusNamespace},
		{"", "gone", "prod", defaultStatusNamespace},
	} {
		if got := statusNamespace(tc.flagNS, tc.flagContext, tc.current, contexts); got != tc.want {
			t.Errorf("statusNamespace(-n %q, --context %q, current %q) = %q, want %q", tc.flagNS, tc.flagContext, tc.current, got, tc.want)
		}
	}
}

// kubeconfigFile writes a kubeconfig whose context "ctx" has namespace ns.
func kubeconfigFile(t *testing.T, ns string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config")
	data := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts:
- {name: ctx, context: {cluster: c, user: u, namespace: "` + ns + `"}}
- {name: other, context: {cluster: c, user: u}}
current-context: ctx
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestStatusKubeconfig(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no ~/.kube/config
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	config := kubeconfigFile(t, "gateways")
	for _, tc := range []struct {
		name       string
		env        string
		target     kubeTarget
		wantNS     string
		wantErr    string
		wantServer string
	}{
		{name: "no kubeconfig at all", wantErr: "no kubeconfig: KUBECONFIG is unset and"},
		{name: "KUBECONFIG names a missing file", env: "/nowhere/config", wantErr: "no kubeconfig: none of KUBECONFIG=/nowhere/config exists"},
		{name: "--kubeconfig missing", target: kubeTarget{kubeconfig: "/nowhere/config"}, wantErr: `--kubeconfig "/nowhere/config"`},
		{name: "KUBECONFIG with the context's namespace", env: config, wantNS: "gateways", wantServer: "https://127.0.0.1:1"},
		{name: "-n wins", target: kubeTarget{kubeconfig: config, namespace: "mine"}, wantNS: "mine"},
		{name: "a context without namespace", target: kubeTarget{kubeconfig: config, context: "other"}, wantNS: defaultStatusNamespace},
		{name: "an unknown context", target: kubeTarget{kubeconfig: config, context: "nope"}, wantErr: `context "nope" does not exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.env)
			c, err := tc.target.loadCluster()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.namespace != tc.wantNS {
				t.Errorf("namespace %q, want %q", c.namespace, tc.wantNS)
			}
			if tc.wantServer != "" && c.config.Host != tc.wantServer {
				t.Errorf("server %q, want %q", c.config.Host, tc.wantServer)
			}
		})
	}
}

func TestStatusFlagsAdminOrCluster(t *testing.T) {
	err := runStatusTo([]string{"--admin", "127.0.0.1:1", "-n", "shop", "--context", "prod"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--admin and --context, -n") {
		t.Errorf("--admin with cluster flags: %v", err)
	}
	// The query's arguments are checked before any kubeconfig is read.
	t.Setenv("KUBECONFIG", "/nowhere/config")
	err = runStatusTo([]string{"policy"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "policy: want one NAMESPACE/NAME") {
		t.Errorf("policy without a name: %v", err)
	}
	t.Setenv("HOME", t.TempDir())
	err = runStatusTo([]string{"-n", "shop"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "no kubeconfig") {
		t.Errorf("without --admin and without a kubeconfig: %v", err)
	}
}

func TestReachPod(t *testing.T) {
	a := statusPod("tlsplane-a", time.Hour, corev1.PodRunning, corev1.ConditionTrue)
	b := statusPod("tlsplane-b", time.Minute, corev1.PodRunning, corev1.ConditionTrue)
	other := statusPod("envoy", time.Hour, corev1.PodRunning, corev1.ConditionTrue)
	other.Labels = map[string]string{"app.kubernetes.io/name": "envoy"}
	holder := "tlsplane-b_1a2b3c4d"
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: statusLease, Namespace: "tlsplane-system"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}

	client := fake.NewClientset(&a, &b, &other, lease)
	target := kubeTarget{selector: defaultPodSelector, adminPort: defaultAdminPort}
	var stderr bytes.Buffer
	pod, port, err := target.reachPod(context.Background(), &cluster{client: client, namespace: "tlsplane-system"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if pod.Name != "tlsplane-b" || port != 19000 {
		t.Errorf("chose %s port %d, want the Lease holder tlsplane-b port 19000", pod.Name, port)
	}
	if want := "tlsplane status: Pod tlsplane-system/tlsplane-b, admin port 19000: Running and Ready, holds Lease"; !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("stderr %q, want it to start with %q", stderr.String(), want)
	}

	// Another namespace has none: the error names selector and namespace.
	_, _, err = target.reachPod(context.Background(), &cluster{client: client, namespace: "shop"}, &stderr)
	if err == nil || !strings.Contains(err.Error(), `no Pod matches selector "app.kubernetes.io/name=tlsplane" in namespace shop`) {
		t.Errorf("empty namespace: %v", err)
	}

	// RBAC refuses the list: the verb and resource are named.
	denied := fake.NewClientset()
	denied.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil)
	})
	_, _, err = target.reachPod(context.Background(), &cluster{client: denied, namespace: "shop"}, &stderr)
	if err == nil || !strings.Contains(err.Error(), "RBAC forbids list pods in namespace shop") {
		t.Errorf("list forbidden: %v", err)
	}

	bad := kubeTarget{selector: "app in (", adminPort: defaultAdminPort}
	if _, _, err := bad.reachPod(context.Background(), &cluster{client: client, namespace: "shop"}, &stderr); err == nil || !strings.Contains(err.Error(), `--selector "app in ("`) {
		t.Errorf("bad selector: %v", err)
	}
}

func TestForwardRefusedNamesTheVerbs(t *testing.T) {
	pod := statusPod("tlsplane-a", time.Minute, corev1.PodRunning, corev1.ConditionTrue)
	dialErr := errors.New("error upgrading connection: forbidden")
	for _, tc := range []struct {
		name    string
		allowed []string // verbs on pods/portforward
		want    string
	}{
		{"neither", nil, "RBAC forbids get and create pods/portforward in namespace tlsplane-system (Pod tlsplane-a)"},
		{"get only", []string{"get"}, "RBAC forbids create pods/portforward in namespace tlsplane-system (Pod tlsplane-a)"},
		{"both: not RBAC", []string{"get", "create"}, "port-forward to Pod tlsplane-system/tlsplane-a: error upgrading connection: forbidden: the kubelet said no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			client.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
				review := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
				attrs := review.Spec.ResourceAttributes
				if attrs.Resource != "pods" || attrs.Subresource != "portforward" || attrs.Namespace != "tlsplane-system" || attrs.Name != "tlsplane-a" {
					t.Errorf("asked about %+v", attrs)
				}
				review.Status.Allowed = slices.Contains(tc.allowed, attrs.Verb)
				return true, review, nil
			})
			err := forwardRefused(context.Background(), &cluster{client: client, namespace: "tlsplane-system"}, &pod, dialErr, "the kubelet said no\n")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
