package node

import (
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A Host given a static address and a pooled one answers on both from the
// host's side of the bridge: what the provisioner reports as a Gateway's
// ingress is where its Envoy is reached. Needs root and iproute2.
func TestHostAnswersOnItsStaticAddress(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip (iproute2)")
	}
	n, err := NewNetwork()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	static := n.StaticAddress(10)
	h, err := n.AddHostWith("static", []string{static}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.IPs) != 2 || h.IP != static || strings.HasPrefix(h.IPs[1], n.prefix+".250.") {
		t.Fatalf("host addresses %v, want %s then one of the pool", h.IPs, static)
	}
	if err := n.Assignable(static); err == nil {
		t.Errorf("Assignable(%s) = nil while %s holds it", static, h.Netns)
	}
	if _, err := n.AddHostWith("again", []string{static}, 0); err == nil {
		t.Errorf("a second host was given %s", static)
	}
	port := serveGreeting(t, h.Netns, "here")
	for _, ip := range h.IPs {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, strconv.Itoa(port)), 3*time.Second)
		if err != nil {
			t.Errorf("dial %s: %v", ip, err)
			continue
		}
		_ = c.SetDeadline(time.Now().Add(3 * time.Second))
		got, _ := io.ReadAll(c)
		_ = c.Close()
		if string(got) != "here" {
			t.Errorf("%s answered %q", ip, got)
		}
	}
}

// serveGreeting listens in netns (listenIn) and writes greeting to every
// connection, then closes it; it returns the port.
func serveGreeting(t *testing.T, netns, greeting string) int {
	t.Helper()
	ln := listenIn(t, netns)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, greeting)
			_ = c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// listenIn listens on every address of the namespace netns, from a thread
// that enters it and returns; a thread that cannot return stays locked,
// and Go ends it with its goroutine.
func listenIn(t *testing.T, netns string) net.Listener {
	t.Helper()
	runtime.LockOSThread()
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	target, err := os.Open("/var/run/netns/" + netns)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	ln, lerr := net.Listen("tcp", "0.0.0.0:0")
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		t.Fatalf("returning to the test's network namespace: %v", err)
	}
	runtime.UnlockOSThread()
	if lerr != nil {
		t.Fatal(lerr)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}
