package main

import (
	"errors"
	"fmt"
	"net"
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

// TestMain runs the real command when the test binary is started as
// tlsplane by runTlsplane: bounds on a process are measured on a process.
func TestMain(m *testing.M) {
	if os.Getenv("TLSPLANE_TEST_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// tlsplaneCommand is this test binary started as `tlsplane args...`.
func tlsplaneCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), "TLSPLANE_TEST_RUN_MAIN=1")
	return cmd
}

// aliasBomb writes the file: a 1 MiB string anchored once and
// aliased 300 times, about 1 MiB on disk and 300 MiB expanded.
func aliasBomb(t *testing.T, path string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: expands, namespace: shop}\ndata:\n  a0: &big \"")
	b.WriteString(strings.Repeat("x", 1<<20))
	b.WriteString("\"\n")
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&b, "  a%d: *big\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// maxRSSLimit is far above tlsplane's own footprint (about 45 MB serving
// the quickstart) and far below the 1.46 GB the bomb cost unbounded.
const maxRSSLimit = 200 << 20

func TestTranslateRefusesAliasBombQuicklyInBoundedMemory(t *testing.T) {
	dir := t.TempDir()
	aliasBomb(t, filepath.Join(dir, "bomb.yaml"))
	for _, path := range []string{filepath.Join(dir, "bomb.yaml"), dir} {
		cmd := tlsplaneCommand(t, "translate", path)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if cmd.ProcessState == nil {
			t.Fatalf("translate %s did not run: %v", path, err)
		}
		elapsed := time.Since(start)
		rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
		t.Logf("translate %s: exit %v, %v, max RSS %d MiB", filepath.Base(path), err, elapsed.Round(time.Millisecond), rss>>20)
		if err == nil || !strings.Contains(string(out), "bomb.yaml: document 1: refused") {
			t.Errorf("translate %s: exit %v, output %.300q; want a failure naming bomb.yaml", path, err, out)
		}
		if rss > maxRSSLimit {
			t.Errorf("translate %s: max RSS %d MiB, want under %d MiB", path, rss>>20, maxRSSLimit>>20)
		}
		if elapsed > 5*time.Second {
			t.Errorf("translate %s took %v", path, elapsed)
		}
	}
}

// freePort is a loopback port free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// peakRSS is a running process's peak resident memory (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kib << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

func TestServeRefusesAliasBombInBoundedMemory(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "svc.yaml"), "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  ports: [{name: http, port: 80}]\n")
	aliasBomb(t, filepath.Join(dir, "bomb.yaml"))
	p := startServeProcess(t, dir)
	logs := p.logs
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := p.get("/metrics")
		if code == 200 && strings.Contains(body, "tlsplane_source_files_failing 1") {
			if code, _ := p.get("/readyz"); code == 200 {
				break
			}
		}
		select {
		case <-p.exited:
			t.Fatalf("serve exited: %v\n%s", p.waitErr, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never showed the failing file and readiness (peak RSS %d MiB); /metrics %d; logs:\n%s", peakRSS(t, p.cmd.Process.Pid)>>20, code, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body := p.get("/debug/snapshot?node=edge"); code != 200 || !strings.Contains(body, "shop/web/80") {
		t.Errorf("/debug/snapshot = %d, want the good file's cluster shop/web/80 served:\n%.1000s", code, body)
	}
	rss := peakRSS(t, p.cmd.Process.Pid)
	t.Logf("serve: peak RSS %d MiB", rss>>20)
	if rss > maxRSSLimit {
		t.Errorf("serve: peak RSS %d MiB, want under %d MiB", rss>>20, maxRSSLimit>>20)
	}
	if !strings.Contains(logs.String(), "bomb.yaml: document 1: refused") {
		t.Errorf("no log naming bomb.yaml:\n%.2000s", logs.String())
	}
}

// A misspelled field is reported by translate and by serve, naming the
// file, the object and the field.
func TestMisspelledFieldsAreReportedByTranslateAndServe(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "pay.yaml"), `apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: pay, namespace: shop}
spec:
  targetRefs: [{group: "", kind: Service, name: payments}]
  validation:
    hostname: payments.shop.example
    hostnme: payments.shop.example
    wellKnownCACertificates: System
`)
	want := `pay.yaml: document 1 (gateway.networking.k8s.io/v1 BackendTLSPolicy shop/pay): unknown field \"spec.validation.hostnme\"`
	// The policy targets a Service that is not there: refused, exit 3.
	out, err := tlsplaneCommand(t, "translate", dir).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitRefused || !strings.Contains(strings.ReplaceAll(string(out), `"`, `\"`), want) {
		t.Errorf("translate: exit %v, want %d and a warning containing %s; output:\n%.2000s", err, exitRefused, want, out)
	}

	p := startServeProcess(t, dir)
	logs := p.logs
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if code, _ := p.get("/readyz"); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready; logs:\n%s", logs.String())
		}
	}
	if !strings.Contains(logs.String(), want) {
		t.Errorf("serve logged no warning containing %s; logs:\n%.2000s", want, logs.String())
	}
}

// serveProcess is a real `tlsplane serve` process and its logs.
type serveProcess struct {
	*servingPlane
	logs    *syncBuffer
	cmd     *exec.Cmd
	exited  chan struct{} // closed once it ended; waitErr is then set
	waitErr error
}

// startServeProcess runs `tlsplane serve --dir dir` with JSON logs; it is
// killed at the test's end.
func startServeProcess(t *testing.T, dir string) *serveProcess {
	t.Helper()
	admin := freePort(t)
	cmd := tlsplaneCommand(t, "serve", "--dir", dir, "--xds-address", freePort(t), "--admin-address", admin, "--log-format", "json")
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sp := &serveProcess{servingPlane: &servingPlane{admin: admin}, logs: logs, cmd: cmd, exited: make(chan struct{})}
	go func() {
		sp.waitErr = cmd.Wait()
		close(sp.exited)
	}()
	// A closed channel, not a value: a test that saw the exit must not
	// leave the cleanup waiting for a second one.
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-sp.exited
	})
	return sp
}

// syncBuffer is a process's output, read while it is written.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
