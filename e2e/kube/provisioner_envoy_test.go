package kube

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// TestProvisionedEnvoyServesGateway runs the real Envoy on the bootstrap
// the provisioner put in the Gateway's ConfigMap, as the Deployment runs
// it (its node id from --service-node), in a network namespace standing in
// for the Pod: it connects to tlsplane (--gateway-xds-address), gets the
// Gateway's listener, answers GET /ready on the readiness port the
// Deployment probes, and nothing else of its admin there. Once over
// plaintext xDS, once over mutual TLS with the client Secret's files where
// the Deployment mounts them (the xDS address an IP, so the server
// certificate carries it as an IP SAN).
func TestProvisionedEnvoyServesGateway(t *testing.T) {
	t.Run("plaintext", func(t *testing.T) { provisionedEnvoy(t, false) })
	t.Run("mutual-tls", func(t *testing.T) { provisionedEnvoy(t, true) })
}

func provisionedEnvoy(t *testing.T, mutualTLS bool) {
	envoy := harness.EnvoyBin(t)
	pod := newBackendNet(t)
	c := adminClients(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	xdsPort := harness.FreePort(t)
	xds := net.JoinHostPort(pod.hostIP, strconv.Itoa(xdsPort))
	dir := t.TempDir()
	security := []string{"--insecure-xds"}
	var ca *harness.Authority
	if mutualTLS {
		ca = harness.NewAuthority(t, "xds CA")
		server := ca.IssueFiles(t, harness.LeafSpec{CommonName: "tlsplane", IPs: []net.IP{net.ParseIP(pod.hostIP)}},
			filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key"))
		caFile := filepath.Join(dir, "ca.crt")
		if err := os.WriteFile(caFile, ca.PEM, 0o600); err != nil {
			t.Fatal(err)
		}
		security = []string{"--xds-tls-cert", server.CertFile, "--xds-tls-key", server.KeyFile, "--xds-client-ca", caFile,
			"--gateway-xds-client-secret", "{gateway}-xds-client"}
	}
	p := harness.StartTLSPlane(t, harness.TLSPlaneOptions{
		Bin: tlsplaneBin, LogDir: t.TempDir(), Name: "tlsplane", XDSHost: pod.hostIP, XDSPort: xdsPort,
		Args: append(append([]string{"--kubeconfig", serviceAccountKubeconfig(t), "--log-level", "debug", "--namespaces", ns,
			"--provision-gateways", "--provision-namespaces", ns, "--gateway-xds-address", xds, "--gateway-service-type", "ClusterIP"}, security...), leaseFlags("provisioner-envoy")...),
		Env: []string{"POD_NAME=tlsplane"}, ReadyTimeout: 60 * time.Second,
	})
	showLogOnFailure(t, p.Process, 20*time.Second, 6000)
	applyProvisionerRBAC(t, ns)

	class := createClass(t, c, ns)
	if _, err := c.gateway.GatewayV1().Gateways(ns).Create(ctx, &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec: gwv1.GatewaySpec{
			GatewayClassName: gwv1.ObjectName(class),
			Listeners:        []gwv1.Listener{{Name: "http", Protocol: gwv1.HTTPProtocolType, Port: 8080}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var boot string
	eventually(t, statusWait, "the bootstrap ConfigMap", func() error {
		cm, err := c.kube.CoreV1().ConfigMaps(ns).Get(ctx, "tlsplane-edge", metav1.GetOptions{})
		if err != nil {
			return err
		}
		boot = cm.Data["bootstrap.json"]
		return nil
	})
	if mutualTLS {
		// What the kubelet would mount from the Secret edge-xds-client. The
		// provisioner applies the ConfigMap before the Deployment, so the
		// Deployment may not exist yet when the ConfigMap does.
		var d *appsv1.Deployment
		eventually(t, statusWait, "the Deployment", func() (err error) {
			d, err = c.kube.AppsV1().Deployments(ns).Get(ctx, "tlsplane-edge", metav1.GetOptions{})
			return err
		})
		if vols := d.Spec.Template.Spec.Volumes; len(vols) != 2 || vols[1].Secret == nil || vols[1].Secret.SecretName != "edge-xds-client" {
			t.Fatalf("Deployment volumes %+v: want the Secret edge-xds-client", vols)
		}
		mount := filepath.Join(dir, "xds-tls")
		if err := os.Mkdir(mount, 0o700); err != nil {
			t.Fatal(err)
		}
		ca.IssueFiles(t, harness.LeafSpec{CommonName: "edge", URIs: []string{"spiffe://cluster.local/fleet/" + ns + "/edge"}, Client: true},
			filepath.Join(mount, "tls.crt"), filepath.Join(mount, "tls.key"))
		if err := os.WriteFile(filepath.Join(mount, "ca.crt"), ca.PEM, 0o600); err != nil {
			t.Fatal(err)
		}
		boot = strings.ReplaceAll(boot, "/etc/tlsplane/xds-tls", mount)
	}
	path := filepath.Join(dir, "bootstrap.json")
	if err := os.WriteFile(path, []byte(boot), 0o644); err != nil {
		t.Fatal(err)
	}
	node := ns + "/tlsplane-edge-0"
	cmd := exec.Command("ip", "netns", "exec", pod.name, envoy, "-c", path, "--service-node", node,
		"--disable-hot-restart", "--log-level", "info", "--base-id", strconv.Itoa(xdsPort))
	e := harness.StartCmd(t, dir, "envoy", cmd)
	showLogOnFailure(t, e, 5*time.Second, 4000)

	ready := "http://" + net.JoinHostPort(pod.backendIP, "19001")
	harness.WaitProbe(t, e, 60*time.Second, func() error {
		body, err := harness.HTTPGet(ready + "/ready")
		if err != nil {
			return err
		}
		if strings.TrimSpace(string(body)) != "LIVE" {
			return fmt.Errorf("/ready: %q", body)
		}
		return nil
	})
	if body, err := harness.HTTPGet(ready + "/stats"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("GET /stats on the readiness port: %v %q, want 404: only /ready of the admin is exposed", err, body)
	}
	t.Log("the Gateway's listener, served by tlsplane to this node, answers on 8080")
	eventually(t, statusWait, "listener 8080", func() error {
		_, err := harness.HTTPGet("http://" + net.JoinHostPort(pod.backendIP, "8080") + "/")
		if err == nil || !strings.Contains(err.Error(), "404") {
			return fmt.Errorf("GET / on 8080: %v, want Envoy's 404 (no route)", err)
		}
		return nil
	})
	if body, err := harness.HTTPGet(p.AdminURL("/debug/connections")); err != nil || !strings.Contains(string(body), node) {
		t.Errorf("tlsplane /debug/connections lacks node %s: %v %s", node, err, body)
	}
}
