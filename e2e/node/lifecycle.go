package node

import (
	"context"
	"os/exec"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// A Pod's containers start as the kubelet starts them: each init
// container in order, a regular one run to completion (restarted with
// backoff while it fails, unless restartPolicy is Never), a native sidecar
// (an init container with restartPolicy Always) started and kept running
// before the next one; then the main containers. The injected mesh Pod
// needs exactly that: capture, bootstrap, then the Envoy sidecar, then the
// workload.

const (
	restartBackoff    = time.Second
	maxRestartBackoff = 10 * time.Second
)

// containerRun is what the agent knows of one container's latest run,
// for the Pod's status.
type containerRun struct {
	started, finished metav1.Time
	running, exited   bool
	exitCode          int32
	restarts          int32
}

// lifecycle is the state of a Pod's containers, shared by the goroutines
// that run them and the status report; changed is called on every change.
type lifecycle struct {
	mu          sync.Mutex
	runs        map[string]*containerRun // by container name
	initialized *metav1.Time             // when the last init step was done
	failed      bool                     // an init container failed with restartPolicy Never
	version     int                      // bumped on every change
	changed     func()
}

func (l *lifecycle) update(name string, f func(*containerRun)) {
	l.change(func() {
		if l.runs[name] == nil {
			l.runs[name] = &containerRun{}
		}
		f(l.runs[name])
	})
}

func (l *lifecycle) markInitialized(failed bool) {
	l.change(func() {
		if failed {
			l.failed = true
		} else {
			now := metav1.Now()
			l.initialized = &now
		}
	})
}

// change applies f under the lock, bumps the version and tells changed.
func (l *lifecycle) change(f func()) {
	l.mu.Lock()
	f()
	l.version++
	l.mu.Unlock()
	if l.changed != nil {
		l.changed()
	}
}

// runContainers runs the Pod's init containers, then its containers, in
// host until ctx ends; it returns when every process has stopped.
func (a *Agent) runContainers(ctx context.Context, run *podRun, pod *corev1.Pod) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, c := range run.inits {
		if c.sidecar {
			// Started before the next step, as the kubelet waits for a
			// sidecar's start (it has no startup probe here).
			started := make(chan struct{})
			wg.Go(func() { a.supervise(ctx, run, logName(pod, c.name), c, started) })
			select {
			case <-started:
			case <-ctx.Done():
				return
			}
			continue
		}
		if !a.runToCompletion(ctx, run, logName(pod, c.name), c, pod.Spec.RestartPolicy != corev1.RestartPolicyNever) {
			if ctx.Err() == nil {
				run.life.markInitialized(true)
			}
			return
		}
	}
	if ctx.Err() != nil {
		return
	}
	run.life.markInitialized(false)
	for _, c := range run.containers {
		wg.Go(func() { a.supervise(ctx, run, logName(pod, c.name), c, nil) })
	}
}

// runOnce starts c in the Pod's namespace and waits for it to exit or
// for ctx to end (then it stops it); the exit code, -1 when stopped.
func (a *Agent) runOnce(ctx context.Context, run *podRun, name string, c container, started chan<- struct{}) (int32, bool) {
	cmd := run.host.Command(c.argv...)
	cmd.Env = c.env
	log := run.logs[c.name]
	cmd.Stdout, cmd.Stderr = log.writer(stdout), log.writer(stderr)
	p := harness.StartCmd(a.t, a.logDir, name, cmd)
	run.life.update(c.name, func(r *containerRun) { r.started, r.running, r.exited = metav1.Now(), true, false })
	if started != nil {
		close(started)
	}
	select {
	case <-ctx.Done():
		p.Stop(5 * time.Second)
		return -1, false
	case <-p.Done():
	}
	code := exitCode(cmd)
	run.life.update(c.name, func(r *containerRun) { r.finished, r.running, r.exited, r.exitCode = metav1.Now(), false, true, code })
	if code != 0 {
		a.t.Logf("node agent: %s exited with code %d; log tail:\n%s", name, code, p.LogTail(10))
	}
	return code, true
}

// exitCode of a command that has been waited for (Done closed after Wait).
func exitCode(cmd *exec.Cmd) int32 {
	if cmd.ProcessState == nil {
		return -1
	}
	return int32(cmd.ProcessState.ExitCode())
}

// runToCompletion runs c until it exits 0, restarting it with backoff
// while retry; false when ctx ended or it failed with no retry.
func (a *Agent) runToCompletion(ctx context.Context, run *podRun, name string, c container, retry bool) bool {
	code, exited := a.restarting(ctx, run, name, c, nil, func(code int32) bool { return code != 0 && retry })
	return exited && code == 0
}

// supervise runs c until ctx ends, restarting it whenever it exits on its
// own; its output goes to the log file and to the container's log, which
// the kubelet endpoint serves. started, when not nil, is closed once the
// first process has started.
func (a *Agent) supervise(ctx context.Context, run *podRun, name string, c container, started chan<- struct{}) {
	a.restarting(ctx, run, name, c, started, func(int32) bool { return true })
}

// restarting runs c, and again after each exit whose code again accepts,
// with a backoff of 1 s doubling to 10 s; it returns the last exit's code,
// and false when ctx ended first.
func (a *Agent) restarting(ctx context.Context, run *podRun, name string, c container, started chan<- struct{}, again func(int32) bool) (int32, bool) {
	backoff := restartBackoff
	for {
		code, exited := a.runOnce(ctx, run, name, c, started)
		if !exited || !again(code) {
			return code, exited
		}
		started = nil
		a.t.Logf("node agent: %s exited; restarting in %s", name, backoff)
		if !sleep(ctx, backoff) {
			return code, false
		}
		run.life.update(c.name, func(r *containerRun) { r.restarts++ })
		backoff = min(2*backoff, maxRestartBackoff)
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
