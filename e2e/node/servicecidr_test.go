package node

import (
	"strconv"
	"strings"
	"testing"
)

// WithServiceCIDR gives a Pod's namespace a route to the cluster IPs, so
// a connection to one leaves the socket layer and the capture's nat
// OUTPUT redirect (here an nft rule like the one tlsplane capture writes)
// turns it toward the sidecar; without the route connect fails with
// "network unreachable" before any rule sees it. Needs root, iproute2,
// nft and bash.
func TestServiceCIDRRouteLetsTheCaptureSeeClusterIPConnections(t *testing.T) {
	n := testNetwork(t, "a redirect in a Pod's namespace", "nft", "bash")
	const cidr, clusterIP = "10.96.0.0/12", "10.96.0.10"
	dial := func(h *Host) (string, error) {
		out, err := h.Command("timeout", "5", "bash", "-c", "exec 3<>/dev/tcp/"+clusterIP+"/80 && cat <&3").CombinedOutput()
		return string(out), err
	}
	for _, tc := range []struct {
		name        string
		serviceCIDR string
		want        string // the answer, or a part of the error
	}{
		{name: "with the route", serviceCIDR: cidr, want: "sidecar"},
		{name: "without", want: "unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := n.AddHost(strings.ReplaceAll(tc.name, " ", ""))
			if err != nil {
				t.Fatal(err)
			}
			a := &Agent{net: n, serviceCIDR: tc.serviceCIDR}
			if err := a.sandbox(h, nil); err != nil {
				t.Fatal(err)
			}
			port := serveGreeting(t, h.Netns, "sidecar")
			rules := "add table ip capture\n" +
				"add chain ip capture out { type nat hook output priority -100; }\n" +
				"add rule ip capture out ip daddr " + cidr + " tcp dport 80 redirect to :" + strconv.Itoa(port) + "\n"
			nft := h.Command("nft", "-f", "-")
			nft.Stdin = strings.NewReader(rules)
			if out, err := nft.CombinedOutput(); err != nil {
				t.Fatalf("nft: %v: %s", err, out)
			}
			out, err := dial(h)
			if !strings.Contains(out, tc.want) {
				t.Fatalf("connect to %s:80 from the Pod: %q (%v), want %q", clusterIP, out, err, tc.want)
			}
		})
	}
}
