package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// The agent serves `kubectl exec` (pods/exec) as the kubelet does, with
// the kubelet's own server side (k8s.io/cri-streaming: SPDY, and the
// WebSocket channel protocol). The kubelet hands the request to its CRI
// runtime's streaming server; the agent is both, so what a runtime does
// under it, start the command in the container, is done here: the
// container has no file system of its own, so a command is one the agent
// was told a container of that image has (AllowCommand), run as a process
// in the Pod's network namespace with the container's environment.

const (
	// execIdleTimeout ends an exec session nobody uses, as the kubelet's
	// --streaming-connection-idle-timeout does (4h there; the suite's
	// commands last seconds).
	execIdleTimeout = 5 * time.Minute
	// execTimeout bounds one command: nothing the suite runs lasts long,
	// and a command that hangs must not outlive the test by much.
	execTimeout = 10 * time.Minute
	// execWaitDelay bounds the wait for a command's output once it has
	// exited (a child it left may hold its stdout).
	execWaitDelay = 5 * time.Second
)

// AllowCommand lets `kubectl exec` run name (the command's first word) in
// the containers of image (any tag), as binary. Commands run with the
// container's environment, in the Pod's network namespace.
func (a *Agent) AllowCommand(image, name, binary string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	repo := repository(image)
	if a.commands[repo] == nil {
		a.commands[repo] = map[string]string{}
	}
	a.commands[repo][name] = binary
}

// commandOf is the binary of command name in the containers of image,
// or an error naming both and what the image has.
func (a *Agent) commandOf(image, name string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	repo := repository(image)
	if bin, ok := a.commands[repo][name]; ok {
		return bin, nil
	}
	var known []string
	for n := range a.commands[repo] {
		known = append(known, n)
	}
	sort.Strings(known)
	has := "none"
	if len(known) > 0 {
		has = strings.Join(known, ", ")
	}
	return "", fmt.Errorf("command %q is not one the node agent can run in image %s (its commands: %s)", name, repo, has)
}

// containerExec answers /exec/{namespace}/{pod}[/{uid}]/{container},
// which the API server's pods/exec proxies to with the command as
// repeated command parameters.
func (a *Agent) containerExec(w http.ResponseWriter, r *http.Request) {
	ns, name, uid, ctr := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("uid"), r.PathValue("container")
	run := a.runOf(ns + "/" + name)
	if run == nil || (uid != "" && uid != string(run.uid)) {
		http.Error(w, fmt.Sprintf("pod %s/%s is not running on node %s", ns, name, a.Node), http.StatusNotFound)
		return
	}
	if run.container(ctr) == nil {
		http.Error(w, fmt.Sprintf("container %s is not in pod %s/%s", ctr, ns, name), http.StatusNotFound)
		return
	}
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	remotecommand.ServeExec(w, r, podCommands{a}, ns+"/"+name, string(run.uid), ctr, r.URL.Query()["command"], opts,
		execIdleTimeout, forwardStreamTimeout, remotecommand.SupportedStreamingProtocols)
}

// container is the Pod's container or init container called name, nil if none.
func (p *podRun) container(name string) *container {
	for _, list := range [][]container{p.containers, p.inits} {
		for i := range list {
			if list[i].name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// podCommands runs exec'd commands in the agent's Pods.
type podCommands struct{ a *Agent }

var _ remotecommand.Executor = podCommands{}

// ExecInContainer runs cmd in container ctr of Pod name (namespace/name)
// with in, out and errOut as its standard streams (each may be nil). A
// command that exits non-zero returns a utilexec.ExitError, which the
// streaming code reports to the client as its exit code.
func (p podCommands) ExecInContainer(ctx context.Context, name, uid, ctr string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, _ <-chan remotecommand.TerminalSize, _ time.Duration) error {
	run := p.a.runOf(name)
	if run == nil || string(run.uid) != uid {
		return fmt.Errorf("pod %s (uid %s) is not running on node %s", name, uid, p.a.Node)
	}
	c := run.container(ctr)
	if c == nil {
		return fmt.Errorf("container %s is not in pod %s", ctr, name)
	}
	if len(cmd) == 0 {
		return fmt.Errorf("container %s of pod %s: no command", ctr, name)
	}
	if tty {
		// Nothing the suite runs asks for one; a pseudo-terminal is not emulated.
		return fmt.Errorf("container %s of pod %s: command %q: the node agent runs commands without a terminal (tty)", ctr, name, cmd[0])
	}
	bin, err := p.a.commandOf(c.image, cmd[0])
	if err != nil {
		return fmt.Errorf("container %s of pod %s: %w", ctr, name, err)
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("container %s of pod %s: command %q: %w", ctr, name, cmd[0], err)
	}
	ctx, cancel := context.WithTimeout(ctx, execTimeout)
	defer cancel()
	proc := run.host.CommandContext(ctx, append([]string{bin}, cmd[1:]...)...)
	proc.Env = c.env
	proc.WaitDelay = execWaitDelay
	if out != nil {
		proc.Stdout = out
	}
	if errOut != nil {
		proc.Stderr = errOut
	}
	if in != nil {
		// A pipe, not proc.Stdin: Wait must not wait for the client to end
		// its input once the command has exited.
		stdin, err := proc.StdinPipe()
		if err != nil {
			return err
		}
		go func() {
			_, _ = io.Copy(stdin, in)
			stdin.Close()
		}()
	}
	err = proc.Run()
	var exit *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("container %s of pod %s: command %q stopped: %w", ctr, name, cmd[0], ctx.Err())
	case errors.As(err, &exit):
		return utilexec.ExitErrorWrapper{ExitError: exit}
	default:
		return fmt.Errorf("container %s of pod %s: command %q: %w", ctr, name, cmd[0], err)
	}
}
