package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is a child started in its own process group, so stopping it
// stops whatever it started too.
type Process struct {
	Name    string
	LogPath string
	cmd     *exec.Cmd
	done    chan struct{}
}

// Start runs bin with its output appended to logDir/<name>.log, and stops
// it (SIGTERM to the group, SIGKILL after 10s) at the test's cleanup.
func Start(t testing.TB, logDir, name, bin string, args ...string) *Process {
	t.Helper()
	return StartCmd(t, logDir, name, exec.Command(bin, args...))
}

// StartCmd is Start for a command the caller prepared (its environment,
// say); StartCmd sets its output and process attributes. A cmd.Stdout or
// cmd.Stderr the caller set gets that stream too, beside the log file.
func StartCmd(t testing.TB, logDir, name string, cmd *exec.Cmd) *Process {
	t.Helper()
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = alsoTo(logFile, cmd.Stdout), alsoTo(logFile, cmd.Stderr)
	// Pdeathsig: if the test binary dies (a -timeout panic skips every
	// Cleanup), the kernel still stops the child.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("starting %s: %v", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	live.Store(p, true)
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		live.Delete(p)
		close(p.done)
	}()
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	return p
}

// live are the children not yet exited; StopAll stops any left.
var live sync.Map

// StopAll stops every child still running, for a TestMain to call after
// the tests: a child whose test's cleanup never ran must not outlive them.
func StopAll() {
	live.Range(func(k, _ any) bool {
		k.(*Process).Stop(5 * time.Second)
		return true
	})
}

// Stop sends SIGTERM to the group, and SIGKILL if it has not exited in grace.
func (p *Process) Stop(grace time.Duration) {
	if p.Exited() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.Kill()
	}
}

// Kill is kill -9 of the group: no shutdown code runs.
func (p *Process) Kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// PID is the process's id (its group's too), for reading /proc/PID.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Log is the process's whole log so far.
func (p *Process) Log() string {
	b, _ := os.ReadFile(p.LogPath)
	return string(b)
}

// LogTail is the last n lines of the process's log, for failure messages.
func (p *Process) LogTail(n int) string {
	lines := strings.Split(strings.TrimRight(p.Log(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// FreePort is an unused loopback port for a server a test starts later
// (an Envoy listener, tlsplane's xDS port). It is drawn below the
// kernel's ephemeral range (32768-60999 by default): a port the kernel
// picks for ":0" is one it may also pick, before the server binds it, as
// the source port of any outgoing connection, which once made an Envoy
// listener fail with "Address already in use". It is free on TCP and UDP
// when drawn, and never handed out twice by this process.
func FreePort(t testing.TB) int {
	t.Helper()
	freePorts.Lock()
	defer freePorts.Unlock()
	for range 200 {
		port := freePortLow + rand.IntN(freePortHigh-freePortLow)
		if freePorts.given[port] || !portFree(port) {
			continue
		}
		freePorts.given[port] = true
		return port
	}
	t.Fatalf("no free loopback port in %d-%d after 200 draws", freePortLow, freePortHigh)
	return 0
}

// The range FreePort draws from: above the well-known and common
// registered ports, below the ephemeral range.
const freePortLow, freePortHigh = 20000, 32768

var freePorts = struct {
	sync.Mutex
	given map[int]bool
}{given: map[int]bool{}}

// portFree: nothing holds port on 127.0.0.1, over TCP or UDP.
func portFree(port int) bool {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	ln.Close()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return false
	}
	pc.Close()
	return true
}

// Eventually polls cond every interval until it returns nil or timeout
// passes, and returns the last error.
func Eventually(timeout, interval time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: %w", timeout, err)
		}
		time.Sleep(interval)
	}
}

var adminClient = &http.Client{Timeout: 5 * time.Second}

// HTTPGet returns the body of a 200 answer from a loopback admin endpoint;
// any other status is an error (with the body, for the message).
func HTTPGet(url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := adminClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return body, errors.New(url + ": " + resp.Status)
	}
	return body, nil
}

// WaitReady waits for url to answer 200, failing early if p exits.
func WaitReady(t testing.TB, p *Process, url string, timeout time.Duration) {
	t.Helper()
	WaitProbe(t, p, timeout, func() error { _, err := HTTPGet(url); return err })
}

// WaitProbe waits for probe to succeed, failing early if p exits.
func WaitProbe(t testing.TB, p *Process, timeout time.Duration, probe func() error) {
	t.Helper()
	err := Eventually(timeout, 100*time.Millisecond, func() error {
		if p.Exited() {
			return errors.New(p.Name + " exited")
		}
		return probe()
	})
	if err != nil {
		t.Fatalf("%s not ready: %v\n--- %s log:\n%s", p.Name, err, p.Name, p.LogTail(40))
	}
}

// alsoTo is the log file, and w too when the caller set one.
func alsoTo(logFile *os.File, w io.Writer) io.Writer {
	if w == nil {
		return logFile
	}
	return io.MultiWriter(logFile, w)
}
