package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// runStatusCommand runs `tlsplane status ARGS --admin` against cp's admin
// listener, as a user does through `kubectl port-forward`.
func runStatusCommand(t *testing.T, cp *controlPlane, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tlsplaneBin, append(append([]string{"status"}, args...), "--admin", "127.0.0.1:"+strconv.Itoa(cp.AdminPort))...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tlsplane status %v: %v: %s", args, err, stderr.String())
	}
	return stdout.String()
}

// TestStatusCommandInKubernetesMode: `tlsplane status` against tlsplane
// in Kubernetes mode shows an ADS client that rejected the cluster of a
// policy as NACKED with its message, and `status policy` shows the
// policy's conditions from the API server's objects and its cluster.
func TestStatusCommandInKubernetesMode(t *testing.T) {
	c := adminClients(t)
	ns := newNamespace(t, c)
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("statuscmd"), "--namespaces", ns)...)
	createService(t, c, ns, "pay")
	createCAConfigMap(t, c, ns, "ca", string(harness.NewAuthority(t, "status CA").PEM))
	createPolicy(t, c, policy(ns, "pay", "pay", "", "ca", "pay.example.com"))
	expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)
	cluster := clusterName(ns, "pay", 443)
	client := harness.DialADS(t, cp.xds, "kube-nacker", "edge")
	client.NACK(t, client.RecvCluster(t, cluster, 20*time.Second), "rejected on purpose by the test")

	var connections struct {
		Connections []struct {
			Node  string `json:"node"`
			Fleet string `json:"fleet"`
			Types []struct {
				TypeURL string `json:"typeURL"`
				State   string `json:"state"`
				NACK    *struct {
					Message string `json:"message"`
				} `json:"nack"`
			} `json:"types"`
		} `json:"connections"`
	}
	eventually(t, statusWait, "kube-nacker NACKED on CDS in tlsplane status -o json", func() error {
		out := runStatusCommand(t, cp, "-o", "json")
		if err := json.Unmarshal([]byte(out), &connections); err != nil {
			return err
		}
		for _, conn := range connections.Connections {
			for _, ty := range conn.Types {
				if conn.Node == "kube-nacker" && conn.Fleet == "edge" && strings.HasSuffix(ty.TypeURL, ".Cluster") &&
					ty.State == "NACKED" && ty.NACK != nil && strings.Contains(ty.NACK.Message, "rejected on purpose by the test") {
					return nil
				}
			}
		}
		return fmt.Errorf("not shown as NACKED: %s", out)
	})
	table := runStatusCommand(t, cp)
	if !strings.Contains(table, "kube-nacker") || !strings.Contains(table, "NACKED") {
		t.Fatalf("tlsplane status table lacks the NACKing client:\n%s", table)
	}
	pol := runStatusCommand(t, cp, "policy", ns+"/pay")
	for _, want := range []string{"BackendTLSPolicy " + ns + "/pay", "Accepted", "ResolvedRefs", cluster} {
		if !strings.Contains(pol, want) {
			t.Fatalf("tlsplane status policy %s/pay lacks %q:\n%s", ns, want, pol)
		}
	}
	t.Logf("tlsplane status:\n%s", table)
}
