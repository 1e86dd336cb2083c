package node

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	utilexec "k8s.io/utils/exec"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// nopCloser is a buffer as the streaming code's stdout and stderr.
type nopCloser struct{ bytes.Buffer }

func (*nopCloser) Close() error { return nil }

// An exec'd command runs in the Pod's network namespace with the
// container's environment and the client's streams; its exit code comes
// back as the ExitError the streaming code reports; a command the image
// was not given, a terminal, or a container not in the Pod is refused by
// name. Needs root and iproute2 (the Pod's namespace is real).
func TestExecInContainer(t *testing.T) {
	if os.Geteuid() != 0 {
		harness.Prerequisite(t, "exec runs in a network namespace", errors.New("not root"))
	}
	ipBin, err := exec.LookPath("ip")
	harness.Prerequisite(t, "exec runs in a network namespace", err)
	n, err := NewNetwork()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	h, err := n.AddHost("exec")
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{Node: "exec-node", net: n, t: t, running: map[string]*podRun{}, commands: map[string]map[string]string{}}
	a.running["shop/pod-a"] = &podRun{uid: "uid-a", host: h, containers: []container{
		{name: "tools", image: "example.com/tools:v1", env: []string{"HOSTNAME=pod-a", "GREETING=hello from tools"}},
		{name: "bare", image: "example.com/bare:v1"},
	}}
	a.AllowCommand("example.com/tools:v2", "sh", "/bin/sh") // any tag
	a.AllowCommand("example.com/tools", "cat", "/bin/cat")
	a.AllowCommand("example.com/tools", "ip", ipBin)

	for _, tc := range []struct {
		name, container, stdin string
		cmd                    []string
		tty                    bool
		stdout, stderr         string
		exit                   int    // with no error: 0
		err                    string // an error that is no exit code
	}{
		{name: "streams and exit code", container: "tools", cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 3"},
			stdout: "out\n", stderr: "err\n", exit: 3},
		{name: "success", container: "tools", cmd: []string{"sh", "-c", "echo $GREETING $HOSTNAME"}, stdout: "hello from tools pod-a\n"},
		{name: "stdin", container: "tools", cmd: []string{"cat"}, stdin: "piped in\n", stdout: "piped in\n"},
		{name: "the Pod's network namespace", container: "tools", cmd: []string{"ip", "-o", "-4", "addr", "show"}, stdout: " " + h.IP + "/16 "},
		{name: "a command the image was not given", container: "tools", cmd: []string{"curl", "http://echo"},
			err: `container tools of pod shop/pod-a: command "curl" is not one the node agent can run in image example.com/tools (its commands: cat, ip, sh)`},
		{name: "an image given no command", container: "bare", cmd: []string{"client", "http://echo"},
			err: `command "client" is not one the node agent can run in image example.com/bare (its commands: none)`},
		{name: "a terminal", container: "tools", cmd: []string{"sh"}, tty: true, err: "without a terminal (tty)"},
		{name: "no command", container: "tools", err: "no command"},
		{name: "a container not in the Pod", container: "sidecar", cmd: []string{"sh"}, err: "container sidecar is not in pod shop/pod-a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr nopCloser
			var in io.Reader // none: no stdin stream, as the streaming code passes it
			if tc.stdin != "" {
				in = strings.NewReader(tc.stdin)
			}
			err := podCommands{a}.ExecInContainer(context.Background(), "shop/pod-a", "uid-a", tc.container, tc.cmd,
				in, &stdout, &stderr, tc.tty, nil, 0)
			var exit utilexec.ExitError
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			case tc.exit != 0:
				if !errors.As(err, &exit) || !exit.Exited() || exit.ExitStatus() != tc.exit {
					t.Fatalf("error %v (%T), want exit code %d", err, err, tc.exit)
				}
			case err != nil:
				t.Fatalf("error %v, want none", err)
			}
			if !strings.Contains(stdout.String(), tc.stdout) || stderr.String() != tc.stderr {
				t.Fatalf("stdout %q, stderr %q; want stdout with %q, stderr %q", stdout.String(), stderr.String(), tc.stdout, tc.stderr)
			}
		})
	}
	if err := (podCommands{a}).ExecInContainer(context.Background(), "shop/pod-a", "uid-old", "tools", []string{"sh"}, nil, nil, nil, false, nil, 0); err == nil ||
		!strings.Contains(err.Error(), "pod shop/pod-a (uid uid-old) is not running on node exec-node") {
		t.Fatalf("exec in a Pod replaced since: %v", err)
	}
}
