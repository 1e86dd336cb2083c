package inject

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/tlsplane/tlsplane/capture"
	"github.com/tlsplane/tlsplane/sidecar"
)

// Config is what every injected Pod gets; tlsplane inject's flags.
type Config struct {
	// SidecarImage is the Envoy image of the native sidecar; its binary
	// is envoy on the PATH, as the provisioner's Gateway Envoys.
	SidecarImage string
	// TLSPlaneImage runs tlsplane capture and tlsplane sidecar-bootstrap.
	TLSPlaneImage string
	// XDSAddress is tlsplane's ADS address as a sidecar dials it,
	// HOST:PORT (sidecar-bootstrap --xds-address).
	XDSAddress string
	// SidecarUID is the UID (and GID) the sidecar runs under; the capture
	// never redirects its connections.
	SidecarUID int64
	// CapturePort and AdminPort are the sidecar's ports on 127.0.0.1.
	CapturePort int
	AdminPort   int
	// IdentityCSIDriver, when set, mounts the workload's certificate from
	// that CSI driver (tls.crt, tls.key, ca.crt: cert-manager's
	// csi-driver-spiffe, spiffe.csi.cert-manager.io, names them so) and
	// the sidecar speaks xDS mutual TLS with it; empty, plaintext xDS.
	IdentityCSIDriver string
}

// DefaultConfig is Config's defaults, images and address left to fill.
func DefaultConfig() Config {
	return Config{
		SidecarUID:  capture.DefaultSidecarUID,
		CapturePort: sidecar.DefaultCapturePort,
		AdminPort:   sidecar.DefaultAdminPort,
	}
}

// Check refuses a Config that would inject Pods that cannot start, naming
// the field (the flags carry the same names).
func (c Config) Check() error {
	var errs []error
	if c.SidecarImage == "" {
		errs = append(errs, errors.New("sidecar image: empty (the Envoy image of the sidecar)"))
	}
	if c.TLSPlaneImage == "" {
		errs = append(errs, errors.New("tlsplane image: empty (runs the capture and the bootstrap)"))
	}
	if host, port, err := net.SplitHostPort(c.XDSAddress); err != nil || host == "" || !validPort(port) {
		errs = append(errs, fmt.Errorf("xDS address %q: want HOST:PORT, as the sidecars dial tlsplane", c.XDSAddress))
	}
	// UID 0 would let every root process of the Pod escape the capture.
	if c.SidecarUID <= 0 || c.SidecarUID > 1<<31-1 {
		errs = append(errs, fmt.Errorf("sidecar UID %d: want 1-%d", c.SidecarUID, 1<<31-1))
	}
	for name, p := range map[string]int{"capture port": c.CapturePort, "admin port": c.AdminPort} {
		if p < 1 || p > 65535 {
			errs = append(errs, fmt.Errorf("%s %d: want 1-65535", name, p))
		}
	}
	if c.CapturePort == c.AdminPort {
		errs = append(errs, fmt.Errorf("capture port and admin port are both %d", c.CapturePort))
	}
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New(strings.Join(msgs, "; "))
}

func validPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= 65535
}
