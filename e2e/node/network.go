package node

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// ownersDir records which process owns each bridge, so a run removes what
// a killed run left behind and never what a concurrent run is using.
const ownersDir = "/run/tlsplane-e2e-bridges"

// Network is a Linux bridge with an address of its own (Gateway, where the
// host's servers listen for the namespaces) and a /16 from which every
// Host gets one address. Hosts have no default route: they reach the
// bridge's subnet and nothing else.
type Network struct {
	bridge  string
	prefix  string // first two octets, "10.217"
	Gateway string // the host side, prefix.0.1

	mu    sync.Mutex
	next  int
	hosts []*Host
}

// Host is one network namespace on the bridge.
type Host struct {
	Netns string
	IP    string   // its first address
	IPs   []string // every address, IP first
	veth  string
}

// NewNetwork creates the bridge. Close removes it and every Host. What a
// killed run left behind (its cleanup never ran) is removed first.
func NewNetwork() (*Network, error) {
	removeStale()
	id := rand.IntN(1 << 16)
	prefix, err := freePrefix()
	if err != nil {
		return nil, err
	}
	n := &Network{
		bridge: fmt.Sprintf("tpcbr%04x", id),
		prefix: prefix,
		next:   2,
	}
	n.Gateway = n.prefix + ".0.1"
	if err := os.MkdirAll(ownersDir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(ownersDir, n.bridge), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	for _, args := range [][]string{
		{"link", "add", n.bridge, "type", "bridge"},
		{"addr", "add", n.Gateway + "/16", "dev", n.bridge},
		{"link", "set", n.bridge, "up"},
	} {
		if err := ip(args...); err != nil {
			n.Close()
			return nil, err
		}
	}
	return n, nil
}

// AddHost creates a namespace named after name with the next free address.
func (n *Network) AddHost(name string) (*Host, error) {
	return n.AddHostWith(name, nil, 1)
}

// AddHostWith creates a namespace named after name holding the static
// addresses (see StaticAddress; each free) and pooled more of the next
// free ones.
func (n *Network) AddHostWith(name string, static []string, pooled int) (*Host, error) {
	h, err := n.reserve(name, static, pooled)
	if err != nil {
		return nil, err
	}
	inner := h.veth + "n"
	steps := [][]string{
		{"netns", "add", h.Netns},
		{"link", "add", h.veth, "type", "veth", "peer", "name", inner},
		{"link", "set", h.veth, "master", n.bridge},
		{"link", "set", h.veth, "up"},
		{"link", "set", inner, "netns", h.Netns},
	}
	for _, a := range h.IPs {
		steps = append(steps, []string{"-n", h.Netns, "addr", "add", a + "/16", "dev", inner})
	}
	steps = append(steps,
		[]string{"-n", h.Netns, "link", "set", inner, "up"},
		[]string{"-n", h.Netns, "link", "set", "lo", "up"})
	for _, args := range steps {
		if err := ip(args...); err != nil {
			n.Remove(h)
			return nil, err
		}
	}
	return h, nil
}

// reserve picks the Host's addresses and lists it in one step, so that
// two hosts never get one static address.
func (n *Network) reserve(name string, static []string, pooled int) (*Host, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ips := slices.Clone(static)
	for _, a := range static {
		if err := n.assignableLocked(a); err != nil {
			return nil, err
		}
	}
	for range pooled {
		i := n.next
		n.next++
		if i >= 250*250 {
			return nil, fmt.Errorf("network %s: no address left", n.bridge)
		}
		ips = append(ips, fmt.Sprintf("%s.%d.%d", n.prefix, i/250, i%250+1))
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("network %s: host %s: no address", n.bridge, name)
	}
	h := &Host{
		Netns: fmt.Sprintf("%s-%s", n.bridge, name),
		IP:    ips[0],
		IPs:   ips,
		veth:  fmt.Sprintf("tpv%x", rand.Uint32()),
	}
	n.hosts = append(n.hosts, h)
	return h, nil
}

// StaticAddress is the i-th (1–254) address of the bridge's static range,
// <prefix>.250.0/24, which AddHost never hands out: addresses a Gateway
// may request in spec.addresses.
func (n *Network) StaticAddress(i int) string {
	return fmt.Sprintf("%s.250.%d", n.prefix, i)
}

// Assignable says why addr cannot be given to a new Host: it is not in
// the static range, or a Host holds it.
func (n *Network) Assignable(addr string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.assignableLocked(addr)
}

func (n *Network) assignableLocked(addr string) error {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return fmt.Errorf("%q is not an IP address", addr)
	}
	static := netip.MustParsePrefix(n.prefix + ".250.0/24")
	if !static.Contains(a) || a == static.Addr() || a.As4()[3] == 255 {
		return fmt.Errorf("%s is not in network %s's static range %s.250.1–254", addr, n.bridge, n.prefix)
	}
	for _, h := range n.hosts {
		if slices.Contains(h.IPs, a.String()) {
			return fmt.Errorf("%s is held by %s", addr, h.Netns)
		}
	}
	return nil
}

// Command is argv run inside the host's namespace.
func (h *Host) Command(argv ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", h.Netns}, argv...)...)
}

// CommandContext is Command, killed when ctx ends (ip netns exec becomes
// argv, so the kill reaches it).
func (h *Host) CommandContext(ctx context.Context, argv ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.Netns}, argv...)...)
}

// Remove deletes the namespace (and with it the veth pair).
func (n *Network) Remove(h *Host) {
	h.remove()
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, x := range n.hosts {
		if x == h {
			n.hosts = append(n.hosts[:i], n.hosts[i+1:]...)
			break
		}
	}
}

func (h *Host) remove() {
	h.removeFiles()
	_ = exec.Command("ip", "netns", "del", h.Netns).Run()
	_ = exec.Command("ip", "link", "del", h.veth).Run() // normally gone with its peer
}

// Close removes every host and the bridge.
func (n *Network) Close() {
	n.mu.Lock()
	hosts := n.hosts
	n.hosts = nil
	n.mu.Unlock()
	for _, h := range hosts {
		h.remove()
	}
	_ = exec.Command("ip", "link", "del", n.bridge).Run()
	_ = os.Remove(filepath.Join(ownersDir, n.bridge))
}

// freePrefix picks a /16 in 10.216–10.231 that no address on this machine
// is in, so concurrent runs' bridges never share a subnet.
func freePrefix() (string, error) {
	out, err := exec.Command("ip", "-o", "-4", "addr", "show").Output()
	if err != nil {
		return "", fmt.Errorf("ip addr show: %w", err)
	}
	start := rand.IntN(16)
	for i := range 16 {
		prefix := fmt.Sprintf("10.%d", 216+(start+i)%16)
		if !strings.Contains(string(out), " "+prefix+".") {
			return prefix, nil
		}
	}
	return "", fmt.Errorf("every prefix 10.216–10.231 is in use on this machine")
}

// ownerAlive reports whether the process that made bridge still runs.
func ownerAlive(bridge string) bool {
	data, err := os.ReadFile(filepath.Join(ownersDir, bridge))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return false
	}
	return syscall.Kill(pid, 0) == nil
}

// removeStale deletes the namespaces and bridges of runs that ended
// without their cleanup; a live run's are left alone.
func removeStale() {
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if name, _, _ := strings.Cut(line, " "); strings.HasPrefix(name, "tpcbr") && !ownerAlive(bridgeOf(name)) {
				(&Host{Netns: name}).removeFiles()
				_ = exec.Command("ip", "netns", "del", name).Run()
			}
		}
	}
	if out, err := exec.Command("ip", "-o", "link", "show", "type", "bridge").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], "tpcbr") {
				bridge := strings.TrimSuffix(f[1], ":")
				if ownerAlive(bridge) {
					continue
				}
				_ = exec.Command("ip", "link", "del", bridge).Run()
				_ = os.Remove(filepath.Join(ownersDir, bridge))
			}
		}
	}
}

// bridgeOf is the bridge a namespace "<bridge>-<host>" hangs on.
func bridgeOf(netns string) string {
	bridge, _, _ := strings.Cut(netns, "-")
	return bridge
}

func ip(args ...string) error {
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
