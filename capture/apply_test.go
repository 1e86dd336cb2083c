package capture

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/nftables"
)

// TestApplyInNetworkNamespace: in a network namespace of its own, the
// kernel holds exactly the rules Describe says (read back over netlink,
// and as the nft binary prints them when there is one); applying again
// replaces rather than adds; Remove deletes the table, and only once.
func TestApplyInNetworkNamespace(t *testing.T) {
	ns := newNetNS(t)
	n, err := Open("/var/run/netns/" + ns)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	c := Config{SidecarUID: DefaultSidecarUID, Port: DefaultPort, ExcludePorts: []uint16{22}}
	want, err := Describe(c)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := n.Apply(c); err != nil {
			t.Fatal(err)
		}
	}
	if got := installed(t, n); !slices.Equal(got, want) {
		t.Errorf("kernel holds:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := exec.LookPath("nft"); err == nil {
		out, err := exec.Command("ip", "netns", "exec", ns, "nft", "list", "chain", "ip", TableName, chainName).CombinedOutput()
		if err != nil {
			t.Fatalf("nft list: %v\n%s", err, out)
		}
		for _, line := range want {
			if !strings.Contains(string(out), "\t\t"+line+"\n") {
				t.Errorf("nft prints no rule %q:\n%s", line, out)
			}
		}
		if !strings.Contains(string(out), "type nat hook output priority ") {
			t.Errorf("nft prints no nat output hook:\n%s", out)
		}
	}
	for i, wantRemoved := range []bool{true, false} {
		removed, err := n.Remove()
		if err != nil || removed != wantRemoved {
			t.Errorf("Remove #%d: %v, %v; want %v", i+1, removed, err, wantRemoved)
		}
	}
	if present, err := n.present(); err != nil || present {
		t.Errorf("after Remove the table is present: %v, %v", present, err)
	}
}

// installed is the capture chain the kernel holds, rendered.
func installed(t *testing.T, n *Namespace) []string {
	t.Helper()
	rs, err := n.conn.GetRules(table(), &nftables.Chain{Name: chainName, Table: table()})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		out = append(out, render(r.Exprs))
	}
	return out
}

// newNetNS is a network namespace deleted at the test's end: root and
// `ip netns` are needed, else the test is skipped (the e2e proof in
// e2e/envoy is the one CI requires).
func newNetNS(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a network namespace")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip (iproute2) to create a network namespace")
	}
	name := fmt.Sprintf("tlsplane-capture-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", name, err, out)
		}
	})
	return name
}
