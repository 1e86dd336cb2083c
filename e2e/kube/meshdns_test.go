package kube

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/gateway-api/conformance"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
	"github.com/tlsplane/tlsplane/e2e/node"
)

// TestMeshPodsResolveServices (issue 39): with the agent's cluster DNS,
// the echo client exec'd in the suite's own echo-v1 Pod resolves the
// Service names the mesh tests ask for (echo-v2, echo-v2.<namespace>, the
// full name) to echo-v2's cluster IP. No sidecar runs yet and the Pod has
// no route to the Service range, so the dial fails at once, naming the
// address the name resolved to: that address is what this checks.
func TestMeshPodsResolveServices(t *testing.T) {
	needNetns(t)
	kcm, err := api.StartControllerManager(apiserver.ClusterControllers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kcm.Stop)
	c := adminClients(t)
	dir := t.TempDir()
	network, err := node.NewNetwork()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(network.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	dns, err := node.StartClusterDNS(ctx, t, c.kube, network)
	if err != nil {
		t.Fatal(err)
	}
	agent := startNodeAgentOn(t, c, network, node.Images{node.EchoAdvancedImage: echoServerBin(t, dir)}, node.WithClusterDNS(dns.Address))
	agent.AllowCommand(node.EchoAdvancedImage, "client", echoClientBin(t, dir))

	manifest, err := fs.ReadFile(conformance.Manifests, "mesh/manifests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteNamespaces(t, c, meshNamespace, meshConsumerNamespace) })
	if _, err := apiserver.Apply(ctx, api.Config, manifest, false); err != nil {
		t.Fatalf("apply the suite's mesh/manifests.yaml: %v", err)
	}
	var v1Pod, v2IP string
	eventually(t, 90*time.Second, "echo-v1 Ready and echo-v2's Service", func() error {
		list, err := c.kube.CoreV1().Pods(meshNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=echo,version=v1"})
		if err != nil {
			return err
		}
		if len(list.Items) != 1 || !podReady(&list.Items[0]) {
			return fmt.Errorf("%d echo-v1 Pods, none Ready", len(list.Items))
		}
		svc, err := c.kube.CoreV1().Services(meshNamespace).Get(ctx, "echo-v2", metav1.GetOptions{})
		if err != nil {
			return err
		}
		v1Pod, v2IP = list.Items[0].Name, svc.Spec.ClusterIP
		return nil
	})
	for _, host := range []string{"echo-v2", "echo-v2." + meshNamespace, "echo-v2." + meshNamespace + ".svc.cluster.local"} {
		run := podExec(t, c, "SPDY", meshNamespace, v1Pod, "echo", "", "client", "http://"+host+"/")
		out := run.stdout + run.stderr
		if want := v2IP + ":80"; !strings.Contains(out, want) {
			t.Errorf("client http://%s/ in echo-v1: %v; its output does not name echo-v2's cluster IP %s:\n%s", host, run.err, want, out)
		}
	}
	run := podExec(t, c, "SPDY", meshNamespace, v1Pod, "echo", "", "client", "http://echo-v9/")
	if out := run.stdout + run.stderr; run.err == nil || !strings.Contains(out, "no such host") {
		t.Errorf("client http://echo-v9/ (no such Service): %v, want no such host:\n%s", run.err, out)
	}
}
