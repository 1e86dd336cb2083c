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
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// process is a child started in its own process group, so stopping it
// stops whatever it started too.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
}

// start runs a command with its output in logDir/<name>.log and registers
// its stop with t.Cleanup.
func start(t *testing.T, logDir, name string, bin string, args ...string) *process {
	t.Helper()
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Pdeathsig: if the test binary dies (a -timeout panic skips every
	// Cleanup), the kernel still stops the child.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("starting %s: %v", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	liveProcesses.Store(p, true)
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		liveProcesses.Delete(p)
		close(p.done)
	}()
	t.Cleanup(func() { p.stop(10 * time.Second) })
	return p
}

// liveProcesses are the children not yet exited; TestMain stops any left.
var liveProcesses sync.Map

func stopLiveProcesses() {
	liveProcesses.Range(func(k, _ any) bool {
		k.(*process).stop(5 * time.Second)
		return true
	})
}

// stop sends SIGTERM to the group, and SIGKILL if it has not exited in grace.
func (p *process) stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// logTail is the end of the process's log, for failure messages.
func (p *process) logTail(n int) string {
	b, _ := os.ReadFile(p.logPath)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// freePort asks the kernel for an unused loopback port.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// eventually polls cond every interval until it returns nil or timeout
// passes, and returns the last error.
func eventually(timeout, interval time.Duration, cond func() error) error {
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

// httpGet returns the body of a 200 answer from a loopback admin endpoint.
func httpGet(url string) ([]byte, error) {
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

// waitReady waits for url to answer 200, failing early if p exits.
func waitReady(t *testing.T, p *process, url string, timeout time.Duration) {
	t.Helper()
	waitProbe(t, p, timeout, func() error { _, err := httpGet(url); return err })
}

// waitProbe waits for probe to succeed, failing early if p exits.
func waitProbe(t *testing.T, p *process, timeout time.Duration, probe func() error) {
	t.Helper()
	err := eventually(timeout, 100*time.Millisecond, func() error {
		if p.exited() {
			return errors.New(p.name + " exited")
		}
		return probe()
	})
	if err != nil {
		t.Fatalf("%s not ready: %v\n--- %s log:\n%s", p.name, err, p.name, p.logTail(40))
	}
}
