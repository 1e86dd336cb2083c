package envoy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// netns is a network namespace the test created and deletes: a Pod's
// network namespace, with only loopback in it.
type netns struct {
	name, path string
}

// newNetNS creates a network namespace named after the test and the
// process, with lo up. Missing root, ip, setpriv or curl, or a kernel
// without network namespaces, is a missing prerequisite (a failure under
// CI=true).
func newNetNS(t *testing.T, prefix string) *netns {
	t.Helper()
	var missing error
	if os.Geteuid() != 0 {
		missing = errors.New("not root: creating a network namespace and programming nftables need it")
	}
	for _, bin := range []string{"ip", "setpriv", "curl"} {
		if _, err := exec.LookPath(bin); err != nil && missing == nil {
			missing = fmt.Errorf("%s: %w", bin, err)
		}
	}
	harness.Prerequisite(t, "network namespace", missing)
	n := &netns{name: fmt.Sprintf("%s-%d", prefix, os.Getpid())}
	n.path = "/var/run/netns/" + n.name
	_ = exec.Command("ip", "netns", "del", n.name).Run() // a previous run killed before its cleanup
	if out, err := exec.Command("ip", "netns", "add", n.name).CombinedOutput(); err != nil {
		harness.Prerequisite(t, "network namespace", fmt.Errorf("ip netns add %s: %v: %s", n.name, err, out))
	}
	// Registered first, so it runs after every process in it is stopped.
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", n.name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", n.name, err, out)
		}
	})
	n.run(t, "ip", "link", "set", "lo", "up")
	return n
}

// run runs a command as root inside the namespace and returns its output.
func (n *netns) run(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.name, name}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("in %s: %s %s: %v\n%s", n.name, name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// command is name run inside the namespace, as uid when it is not 0
// (setpriv, which keeps the parent-death signal harness.StartCmd sets).
func (n *netns) command(uid int, name string, args ...string) *exec.Cmd {
	return exec.Command("ip", n.argv(uid, name, args...)...)
}

// argv is ip's arguments for command.
func (n *netns) argv(uid int, name string, args ...string) []string {
	argv := []string{"netns", "exec", n.name}
	if uid != 0 {
		id := strconv.Itoa(uid)
		argv = append(argv, "setpriv", "--reuid="+id, "--regid="+id, "--clear-groups", "--pdeathsig=KILL", "--")
	}
	return append(append(argv, name), args...)
}

// dial connects from inside the namespace: the socket is made on an OS
// thread moved into it, and stays there; the thread is moved back before
// it is unlocked. It must not die instead: harness.StartCmd's children
// get SIGKILL when the thread that forked them exits (Pdeathsig), and any
// thread may have forked one. Only when the move back fails is the thread
// left locked, to end with its goroutine.
func (n *netns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		home, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{nil, err}
			return
		}
		defer unix.Close(home)
		fd, err := unix.Open(n.path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{nil, err}
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- result{nil, fmt.Errorf("setns %s: %w", n.path, err)}
			return
		}
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if unix.Setns(home, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- result{c, err}
	}()
	r := <-done
	return r.conn, r.err
}

// get is one GET of a loopback admin endpoint inside the namespace (the
// test runs as root, which the capture redirects, but not to loopback).
func (n *netns) get(url string) ([]byte, error) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: n.dial, DisableKeepAlives: true}}
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return body, nil
}

// waitGet waits until url answers 200 inside the namespace, failing early
// when p exits.
func (n *netns) waitGet(t *testing.T, p *harness.Process, url string, timeout time.Duration) {
	t.Helper()
	harness.WaitProbe(t, p, timeout, func() error { _, err := n.get(url); return err })
}
