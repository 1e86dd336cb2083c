package capture

import (
	"fmt"
	"slices"
)

// Defaults: the sidecar's fixed UID and its capture listener's port
// (sidecar.DefaultCapturePort).
const (
	DefaultSidecarUID = 1337
	DefaultPort       = 15001
)

// TableName is the one nftables table the capture owns (family ip).
const TableName = "tlsplane_mesh"

// chainName is the table's chain on the nat output hook.
const chainName = "output"

// Config is what the capture redirects.
type Config struct {
	// SidecarUID's traffic is never redirected: the sidecar's xDS and
	// upstream connections would otherwise loop back into it.
	SidecarUID uint32
	// Port is the sidecar's capture listener on 127.0.0.1.
	Port uint16
	// ExcludePorts are destination ports never redirected.
	ExcludePorts []uint16
}

// check refuses a Config that would capture the wrong traffic.
func (c Config) check() error {
	if c.SidecarUID == 0 {
		return fmt.Errorf("capture: sidecar UID 0: root's traffic would all escape the capture, and the sidecar must not run as root")
	}
	if c.Port == 0 {
		return fmt.Errorf("capture: port 0: want the sidecar's capture listener port")
	}
	for i, p := range c.ExcludePorts {
		if p == 0 {
			return fmt.Errorf("capture: excluded port 0: not a TCP port")
		}
		if slices.Contains(c.ExcludePorts[:i], p) {
			return fmt.Errorf("capture: excluded port %d given twice", p)
		}
		if p == c.Port {
			// Excluding the capture port does not stop the redirect to it; say so.
			return fmt.Errorf("capture: excluded port %d is the capture port", p)
		}
	}
	return nil
}
