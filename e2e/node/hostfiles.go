package node

import (
	"fmt"
	"os"
	"path/filepath"
)

// netnsEtc is where `ip netns exec` finds a namespace's own files: it
// enters a mount namespace of its own and bind-mounts
// /etc/netns/<netns>/<file> over /etc/<file>, so every process Host.Command
// starts sees that resolv.conf and no other process does.
const netnsEtc = "/etc/netns"

// SetResolvConf gives the host's processes resolv.conf as their
// /etc/resolv.conf (Host.Command enters the namespace with ip netns exec).
func (h *Host) SetResolvConf(resolvConf string) error {
	dir := filepath.Join(netnsEtc, h.Netns)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("host %s: resolv.conf: %w", h.Netns, err)
	}
	// Readable by all: a Pod's non-root containers resolve names too.
	if err := os.WriteFile(filepath.Join(dir, "resolv.conf"), []byte(resolvConf), 0o644); err != nil {
		return fmt.Errorf("host %s: resolv.conf: %w", h.Netns, err)
	}
	return nil
}

// AddRoute sends the host's packets for cidr to the bridge's gateway:
// Service cluster IPs have no host, and a connection to one must be
// routable for the sidecar's capture to see it (the route is looked up
// before the nat hook redirects it).
func (n *Network) AddRoute(h *Host, cidr string) error {
	return ip("-n", h.Netns, "route", "add", cidr, "via", n.Gateway)
}

// removeFiles deletes what SetResolvConf wrote.
func (h *Host) removeFiles() { _ = os.RemoveAll(filepath.Join(netnsEtc, h.Netns)) }
