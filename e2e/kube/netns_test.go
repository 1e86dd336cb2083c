package kube

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// backendNet is a network namespace the test made, joined to the host by
// a veth pair: the API server refuses loopback EndpointSlice addresses,
// so backends listen on the namespace's side of a private /30.
type backendNet struct {
	name      string
	hostIP    string // this side, routable from Envoy
	backendIP string // inside the namespace, where backends listen
}

// needNetns skips without root or iproute2, or fails under CI=true, where
// the traffic tests must run.
func needNetns(t *testing.T) {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "not root"
	} else if _, err := exec.LookPath("ip"); err != nil {
		why = "ip (iproute2) not found"
	}
	if why != "" {
		harness.Prerequisite(t, "Kubernetes-mode traffic needs a network namespace", errors.New(why))
	}
}

func ipCmd(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// newBackendNet creates the namespace and veth pair, removed at the end.
func newBackendNet(t *testing.T) *backendNet {
	t.Helper()
	needNetns(t)
	id := rand.IntN(1 << 16)
	octet := 64 + rand.IntN(64) // 10.213.<64-127>.<4k>/30, used only on this link
	sub := rand.IntN(60) * 4
	n := &backendNet{
		name:      fmt.Sprintf("tlsplane-kube-%04x", id),
		hostIP:    fmt.Sprintf("10.213.%d.%d", octet, sub+1),
		backendIP: fmt.Sprintf("10.213.%d.%d", octet, sub+2),
	}
	hostLink, nsLink := fmt.Sprintf("tpk%04xh", id), fmt.Sprintf("tpk%04xn", id)
	ipCmd(t, "netns", "add", n.name)
	t.Cleanup(func() {
		_ = exec.Command("ip", "netns", "del", n.name).Run()
		_ = exec.Command("ip", "link", "del", hostLink).Run() // gone with the namespace's peer, normally
	})
	ipCmd(t, "link", "add", hostLink, "type", "veth", "peer", "name", nsLink)
	ipCmd(t, "link", "set", nsLink, "netns", n.name)
	ipCmd(t, "addr", "add", n.hostIP+"/30", "dev", hostLink)
	ipCmd(t, "link", "set", hostLink, "up")
	ipCmd(t, "-n", n.name, "addr", "add", n.backendIP+"/30", "dev", nsLink)
	ipCmd(t, "-n", n.name, "link", "set", nsLink, "up")
	ipCmd(t, "-n", n.name, "link", "set", "lo", "up")
	return n
}
