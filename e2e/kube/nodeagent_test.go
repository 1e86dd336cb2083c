package kube

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
	"github.com/tlsplane/tlsplane/e2e/node"
)

// tlsplaneImage is the image the node agent runs as the tlsplane binary
// under test.
const tlsplaneImage = "ghcr.io/tlsplane/tlsplane"

// startNodeAgent gives the shared API server a Node for the test: a bridge
// of network namespaces and the e2e node agent as its kubelet, which runs
// tlsplaneImage as tlsplaneBin and serves Pod logs and port-forwards to
// the API server. The test's Pods are deleted (and their processes
// stopped) before the agent and the bridge go.
func startNodeAgent(t *testing.T, c clients) *node.Agent {
	t.Helper()
	return startNodeAgentWith(t, c, node.Images{tlsplaneImage: tlsplaneBin})
}

// startNodeAgentWith is startNodeAgent running images.
func startNodeAgentWith(t *testing.T, c clients, images node.Images) *node.Agent {
	t.Helper()
	needNetns(t)
	network, err := node.NewNetwork()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(network.Close)
	return startNodeAgentOn(t, c, network, images)
}

// startNodeAgentOn is startNodeAgentWith on a bridge the test made, for
// options that need its addresses (a cluster DNS on its gateway).
func startNodeAgentOn(t *testing.T, c clients, network *node.Network, images node.Images, opts ...node.AgentOption) *node.Agent {
	t.Helper()
	cert, err := api.KubeletServingCertificate(network.Gateway)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	name := fmt.Sprintf("kube-node-%04x", rand.IntN(1<<16))
	agent, err := node.StartAgent(ctx, t, c.kube, network, images, name, t.TempDir(), node.KubeletTLS{
		Certificate: cert, ClientCAs: api.KubeletClientCAs(), ClientName: apiserver.KubeletClientName,
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return agent
}

// runPod creates pod, deleted at the end of the test (through the agent,
// which stops its processes), and waits until the agent reports it
// Running and Ready.
func runPod(t *testing.T, c clients, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	// No controller-manager runs here to create the namespace's default
	// ServiceAccount, which Pod admission requires.
	_, err := c.kube.CoreV1().ServiceAccounts(pod.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	created, err := c.kube.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	t.Cleanup(func() { deletePod(t, c, pod.Namespace, pod.Name) })
	var running *corev1.Pod
	eventually(t, 60*time.Second, fmt.Sprintf("Pod %s/%s Running and Ready", pod.Namespace, pod.Name), func() error {
		p, err := c.kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cond := range p.Status.Conditions {
			if p.Status.Phase == corev1.PodRunning && cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				running = p
				return nil
			}
		}
		return fmt.Errorf("phase %q, status %+v", p.Status.Phase, p.Status.ContainerStatuses)
	})
	if running.UID != created.UID {
		t.Fatalf("Pod %s/%s was replaced", pod.Namespace, pod.Name)
	}
	// Again, now that its processes run: this cleanup goes before theirs
	// (the harness stops processes it started), so the agent stops them
	// rather than restarting one the harness killed.
	t.Cleanup(func() { deletePod(t, c, pod.Namespace, pod.Name) })
	return running
}

// deletePod deletes a Pod and waits (bounded) until the agent has
// stopped it and removed the object.
func deletePod(t *testing.T, c clients, ns, name string) {
	ctx := context.Background()
	if err := c.kube.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); apierrors.IsNotFound(err) {
		return
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := c.kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("Pod %s/%s still there 30s after its deletion", ns, name)
}
