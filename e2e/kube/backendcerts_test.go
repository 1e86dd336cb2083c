package kube

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

const backendCertificatesValid = "tlsplane.io/BackendCertificatesValid"

// TestBackendCertificatesAcrossReplicas: two replicas; a real Envoy of a
// Gateway's fleet, connected to the replica that is not the leader,
// reports over the access log service the certificate of a TLS backend
// an HTTPRoute reaches (valid a day: within the expiry warning). The
// follower publishes its inventory in its ConfigMap
// <lease>-certificates-<replica>, and the leader, whose own Envoys saw
// nothing, writes BackendCertificatesValid=False Expiring on the
// BackendTLSPolicy, naming the backend and the fleet.
func TestBackendCertificatesAcrossReplicas(t *testing.T) {
	bnet := newBackendNet(t)
	c := adminClients(t)
	e := &trafficEnv{t: t, c: c, ns: newNamespace(t, c), net: bnet, bin: harness.BackendBin(t, t.TempDir()), backend: map[string]*harness.Process{}}
	ns := e.ns
	ctx := context.Background()
	lease := "backendcerts-" + ns[strings.LastIndex(ns, "-")+1:]
	flags := append(leaseFlags(lease), "--namespaces", ns,
		"--leader-election-lease-duration", leaseDuration.String(),
		"--leader-election-renew-deadline", renewDeadline.String(),
		"--leader-election-retry-period", retryPeriod.String(),
		"--listener-address", "127.0.0.1",
		"--backend-certificate-sample", "100")
	kubeconfig := serviceAccountKubeconfig(t)
	replicas := map[string]*controlPlane{}
	for _, name := range []string{"tlsplane-a", "tlsplane-b"} {
		replicas[name] = startTLSPlane(t, name, kubeconfig, flags...)
	}

	// GatewayClasses are cluster-scoped: one named after this namespace.
	class := "tlsplane-" + ns[strings.LastIndex(ns, "-")+1:]
	if _, err := c.gateway.GatewayV1().GatewayClasses().Create(ctx, &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: class},
		Spec:       gwv1.GatewayClassSpec{ControllerName: controller},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.gateway.GatewayV1().GatewayClasses().Delete(context.Background(), class, metav1.DeleteOptions{})
	})
	port := harness.FreePort(t)
	if _, err := c.gateway.GatewayV1().Gateways(ns).Create(ctx, httpGateway(ns, "edge", class, "127.0.0.1", int32(port)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.gateway.GatewayV1().HTTPRoutes(ns).Create(ctx, routeTo(ns, "pay", "edge", "pay.example", ns, "pay", 443), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ca := harness.NewAuthority(t, "backend certificates CA")
	e.backendService("pay", 8443)
	e.startBackend("pay", 8443, ca, "pay.example.com")
	createCAConfigMap(t, c, ns, "pay-ca", string(ca.PEM))
	createPolicy(t, c, policy(ns, "pay", "pay", "", "pay-ca", "pay.example.com"))

	var leader string
	eventually(t, statusWait, "a leader", func() error {
		if leader = holder(t, c, lease); replicas[leader] == nil {
			return fmt.Errorf("holder %q", leader)
		}
		return nil
	})
	follower := "tlsplane-a"
	if leader == follower {
		follower = "tlsplane-b"
	}
	fleet := ns + "/edge"
	t.Logf("leader %s; the Gateway's Envoy (fleet %s) connects to %s", leader, fleet, follower)
	envoy := harness.StartEnvoy(t, harness.EnvoyOptions{
		Bin: harness.EnvoyBin(t), LogDir: t.TempDir(), Name: "envoy-at-follower", NodeID: "envoy-at-follower", Fleet: fleet,
		XDSAddress: replicas[follower].xds, StatPrefix: "kube", GatewayListeners: true, WaitReady: true,
	})
	showLogOnFailure(t, envoy.Process, 10*time.Second, 3000)

	// A bounded number of requests through the Gateway, until the leader
	// wrote the condition on the API server.
	backendHost := bnet.backendIP + ":8443"
	var got *metav1.Condition
	var answered int
	var err error
	for i := range 60 {
		if status, rerr := gatewayGet(port, "pay.example"); rerr == nil && status == 200 {
			answered++
		}
		got, err = policyCondition(c, ns, "pay", backendCertificatesValid)
		if err == nil && got != nil && got.Status == metav1.ConditionFalse && got.Reason == "Expiring" {
			t.Logf("after %d requests (%d answered 200): %s %s: %s", i+1, answered, got.Status, got.Reason, got.Message)
			break
		}
		got = nil
		time.Sleep(500 * time.Millisecond)
	}
	if got == nil {
		t.Fatalf("after 60 requests through the Gateway (%d answered 200), BackendTLSPolicy %s/pay has no %s=False Expiring: %v", answered, ns, backendCertificatesValid, err)
	}
	for _, want := range []string{`fleet "` + fleet + `"`, "backend " + backendHost, "cluster " + clusterName(ns, "pay", 443)} {
		if !strings.Contains(got.Message, want) {
			t.Errorf("message %q lacks %q", got.Message, want)
		}
	}
	if w := replicas[follower].statusWrites(t); w != "0" {
		t.Errorf("the follower %s wrote status %s times", follower, w)
	}

	// The follower's inventory, published for its peers.
	prefix := lease + "-certificates-" + follower
	cms, err := c.kube.CoreV1().ConfigMaps("tlsplane-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	found := false
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, lease+"-") {
			names = append(names, cm.Name)
		}
		if strings.HasPrefix(cm.Name, prefix) {
			found = true
			t.Logf("ConfigMap tlsplane-system/%s: labels %v, annotations %v", cm.Name, cm.Labels, cm.Annotations)
		}
	}
	if !found {
		t.Errorf("no ConfigMap tlsplane-system/%s-…; the lease's are %v", prefix, names)
	}
}

// gatewayGet sends GET / with host to the Gateway's HTTP listener on
// loopback, on a new connection.
func gatewayGet(port int, host string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(port)+"/", nil)
	if err != nil {
		return 0, err
	}
	req.Host = host
	transport := &http.Transport{DisableKeepAlives: true}
	defer transport.CloseIdleConnections()
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
