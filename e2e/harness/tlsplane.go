package harness

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// TLSPlaneOptions say how one `tlsplane serve` is started.
type TLSPlaneOptions struct {
	Bin    string
	LogDir string
	// Name names the log; "tlsplane" when empty.
	Name string
	// XDSPort and AdminPort are its loopback ports; a restart passes the
	// old ones so Envoy reconnects to the same address. 0: a free port.
	XDSPort, AdminPort int
	// XDSHost is the IP the xDS server binds; 127.0.0.1 when empty. Any
	// other address needs --insecure-xds or mutual TLS in Args.
	XDSHost string
	// Args follow `serve --xds-address … --admin-address …`: the source
	// (--dir or --kubeconfig) and any other flag.
	Args []string
	// Env is added to the test's environment.
	Env []string
	// ReadyTimeout bounds the wait for /readyz; 30s when zero.
	ReadyTimeout time.Duration
	// FileLimit, when set, is the process's RLIMIT_NOFILE, soft and hard
	// (`ulimit -n` in a shell that then execs tlsplane, so the PID is
	// tlsplane's): a flood test can reach it with few connections.
	FileLimit int
}

// TLSPlane is a running `tlsplane serve`.
type TLSPlane struct {
	*Process
	XDSHost            string
	XDSPort, AdminPort int
}

// StartTLSPlane starts `tlsplane serve` and waits until /readyz answers
// 200, which it does once it has published a first snapshot.
func StartTLSPlane(t testing.TB, o TLSPlaneOptions) *TLSPlane {
	t.Helper()
	if o.Name == "" {
		o.Name = "tlsplane"
	}
	if o.XDSPort == 0 {
		o.XDSPort = FreePort(t)
	}
	if o.AdminPort == 0 {
		o.AdminPort = FreePort(t)
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 30 * time.Second
	}
	if o.XDSHost == "" {
		o.XDSHost = "127.0.0.1"
	}
	args := append([]string{"serve",
		"--xds-address", net.JoinHostPort(o.XDSHost, strconv.Itoa(o.XDSPort)),
		"--admin-address", "127.0.0.1:" + strconv.Itoa(o.AdminPort)}, o.Args...)
	cmd := exec.Command(o.Bin, args...)
	if o.FileLimit > 0 {
		cmd = exec.Command("/bin/sh", append([]string{"-c", `ulimit -n "$0" && exec "$@"`, strconv.Itoa(o.FileLimit), o.Bin}, args...)...)
	}
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	p := &TLSPlane{Process: StartCmd(t, o.LogDir, o.Name, cmd), XDSHost: o.XDSHost, XDSPort: o.XDSPort, AdminPort: o.AdminPort}
	WaitReady(t, p.Process, p.AdminURL("/readyz"), o.ReadyTimeout)
	return p
}

// XDSAddress is where Envoy connects: XDSHost:PORT.
func (p *TLSPlane) XDSAddress() string { return net.JoinHostPort(p.XDSHost, strconv.Itoa(p.XDSPort)) }

// AdminURL is path on the admin listener (/readyz, /metrics, /debug/…).
func (p *TLSPlane) AdminURL(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(p.AdminPort) + path
}
