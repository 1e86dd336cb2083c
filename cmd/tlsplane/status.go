package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
)

const statusHelp = `Usage:
  tlsplane status [-o table|json] [CLUSTER FLAGS | --admin ADDR]
  tlsplane status policy NAMESPACE/NAME [-o table|json] [CLUSTER FLAGS | --admin ADDR]
  tlsplane status xbackend NAMESPACE/NAME [-o table|json] [CLUSTER FLAGS | --admin ADDR]
  tlsplane status xbackendtrafficpolicy NAMESPACE/NAME [-o table|json] [CLUSTER FLAGS | --admin ADDR]
  kubectl tlsplane status ...   (the binary installed as kubectl-tlsplane)

Asks a running tlsplane serve, through its admin server, what it serves.
The first form prints every connected Envoy (node, fleet, SotW or delta
ADS, peer, connected for how long) and per type whether it holds the
version last sent (SYNCED), has not answered it yet (STALE, for how long)
or rejected it (NACKED, with Envoy's message below the row). The second
prints a BackendTLSPolicy's conditions per ancestor, the clusters it
governs, their handshake windows, the certificates their backends
presented (host, subject, issuer, serial, notAfter, TLS version and
cipher, last seen) and the rejections traced to it. The
last two print an XBackend's conditions per parent Gateway, or an
XBackendTrafficPolicy's per ancestor.

Without --admin it reaches the cluster by itself, as kubectl does: the
kubeconfig ($KUBECONFIG, ~/.kube/config, or --kubeconfig and --context),
a Running and Ready tlsplane Pod of the namespace (-n, else the context's,
else ` + defaultStatusNamespace + `; the status writer's Lease holder first), and a
port-forward through the API server to its admin port, closed when done.
That needs RBAC in the namespace for pods get and list and
pods/portforward get and create (WebSocket forwards need both since
Kubernetes 1.35). With --admin it asks that address, e.g. a port
forwarded with
  ` + portForwardHint + `
`

// portForwardHint is how an operator reaches a Pod's admin port by hand.
const portForwardHint = "kubectl -n tlsplane-system port-forward deploy/tlsplane 19000"

var statusFlagGroups = []flagGroup{
	{"Cluster (without --admin)", []string{"kubeconfig", "context", "namespace", "n", "selector", "l", "admin-port"}},
	{"Admin server", []string{"admin", "timeout"}},
	{"Output", []string{"o"}},
}

const (
	formatTable = "table"
	formatJSON  = "json"
)

// statusConfig is what both views of status read.
type statusConfig struct {
	admin   string
	timeout time.Duration
	format  string
	kube    kubeTarget
}

func newStatusFlags() (*statusConfig, *flag.FlagSet) {
	cfg := &statusConfig{}
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.StringVar(&cfg.admin, "admin", "", "`ADDR` of tlsplane's admin server, host:port or a URL (e.g. 127.0.0.1:19000 for a port you forwarded); without it, status reaches a Pod of the cluster itself")
	fs.DurationVar(&cfg.timeout, "timeout", 5*time.Second, "bound on each request to the admin server, and on finding the Pod and opening the port-forward")
	cfg.kube.register(fs)
	fs.StringVar(&cfg.format, "o", formatTable, "output format: table or json")
	return cfg, fs
}

// runStatus prints the connections view, or with "policy NS/NAME" the
// policy view, or with "xbackend NS/NAME" or "xbackendtrafficpolicy
// NS/NAME" that object's conditions; which Pod it asks goes to stderr.
func runStatus(args []string, stdout io.Writer) error {
	return runStatusTo(args, stdout, os.Stderr)
}

func runStatusTo(args []string, stdout, stderr io.Writer) error {
	cfg, fs := newStatusFlags()
	positional, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(stdout, fs, statusHelp, statusFlagGroups)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w (tlsplane status --help lists the flags)", err)
	}
	if cfg.format != formatTable && cfg.format != formatJSON {
		return fmt.Errorf("-o %q: want table or json", cfg.format)
	}
	view, err := statusQuery(positional, cfg.format)
	if err != nil {
		return err
	}
	if cfg.admin != "" {
		if set := clusterFlagsSet(fs); len(set) > 0 {
			return fmt.Errorf("--admin and %s: --admin names the admin server, the cluster flags find one; give one or the other", strings.Join(set, ", "))
		}
		return view(stdout, &adminClient{base: adminBase(cfg.admin), client: &http.Client{Timeout: cfg.timeout}})
	}
	return statusThroughCluster(cfg, view, stdout, stderr)
}

// statusQuery is the query the positional arguments ask for.
func statusQuery(positional []string, format string) (func(io.Writer, *adminClient) error, error) {
	switch {
	case len(positional) == 0:
		return func(w io.Writer, a *adminClient) error { return printConnections(w, a, format) }, nil
	case positional[0] == "policy" && len(positional) == 2:
		return func(w io.Writer, a *adminClient) error { return printPolicy(w, a, positional[1], format) }, nil
	case positional[0] == "policy":
		return nil, errors.New("policy: want one NAMESPACE/NAME (tlsplane status --help)")
	}
	if k, ok := xKindOf(positional[0]); ok {
		if len(positional) != 2 {
			return nil, fmt.Errorf("%s: want one NAMESPACE/NAME (tlsplane status --help)", k.arg)
		}
		return func(w io.Writer, a *adminClient) error { return printXObject(w, a, k, positional[1], format) }, nil
	}
	return nil, fmt.Errorf("unknown argument %q: want nothing, or policy, xbackend or xbackendtrafficpolicy and NAMESPACE/NAME (tlsplane status --help)", positional[0])
}

// clusterFlagsSet are the cluster flags given on the command line.
func clusterFlagsSet(fs *flag.FlagSet) []string {
	var set []string
	fs.Visit(func(f *flag.Flag) {
		for _, g := range statusFlagGroups {
			if g.title == "Cluster (without --admin)" && slices.Contains(g.names, f.Name) {
				set = append(set, flagSpelling(f.Name))
			}
		}
	})
	return set
}

// flagSpelling is -n for a one-letter flag, --name otherwise, as help prints them.
func flagSpelling(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// statusThroughCluster finds the Pod, forwards its admin port, asks view
// through the forward and closes it.
func statusThroughCluster(cfg *statusConfig, view func(io.Writer, *adminClient) error, stdout, stderr io.Writer) error {
	c, err := cfg.kube.loadCluster()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	pod, port, err := cfg.kube.reachPod(ctx, c, stderr)
	if err != nil {
		return err
	}
	fwd, err := forwardAdmin(ctx, c, pod, port, cfg.timeout)
	if err != nil {
		return err
	}
	defer fwd.Close()
	return view(stdout, &adminClient{base: fwd.base, client: &http.Client{Timeout: cfg.timeout},
		via: fmt.Sprintf("Pod %s/%s port %d", pod.Namespace, pod.Name, port), forwardErrs: fwd.errs})
}

// adminBase is addr as a URL without a trailing slash: host:port gets
// http://.
func adminBase(addr string) string {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	return strings.TrimRight(addr, "/")
}

// adminClient reads tlsplane's admin server.
type adminClient struct {
	base   string
	client *http.Client
	// via names the Pod when base is a port-forward to it; forwardErrs
	// are what the forward reported.
	via         string
	forwardErrs fmt.Stringer
}

// get returns the body of a 200 answer to path; every other outcome is an
// error that says what to do.
func (a *adminClient) get(path string) ([]byte, error) {
	resp, err := a.client.Get(a.base + path)
	if err != nil && a.via != "" {
		reported := ""
		if a.forwardErrs != nil {
			// The kubelet's error comes on its own stream, maybe just after
			// the data stream ended: wait for it a bounded moment.
			for i := 0; i < 25 && strings.TrimSpace(a.forwardErrs.String()) == ""; i++ {
				time.Sleep(20 * time.Millisecond)
			}
			if s := strings.TrimSpace(a.forwardErrs.String()); s != "" {
				reported = "\n" + s
			}
		}
		return nil, fmt.Errorf("admin server of %s unreachable through the port-forward: %v%s\nIs tlsplane serve running there with --admin-address on that port?", a.via, unwrapURLError(err), reported)
	}
	if err != nil {
		return nil, fmt.Errorf("admin server %s unreachable: %v\nIs tlsplane serve running with --admin-address there? For a cluster, forward the port first:\n  %s", a.base, unwrapURLError(err), portForwardHint)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("admin server %s: reading %s: %v", a.base, path, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return body, nil
	case http.StatusNotFound:
		return nil, fmt.Errorf("admin server %s has no %s: a tlsplane older than `tlsplane status`, or not tlsplane", a.base, path)
	case http.StatusForbidden:
		return nil, fmt.Errorf("admin server %s refused %s: %s\nIt answers loopback clients only; for a cluster:\n  %s", a.base, path, strings.TrimSpace(string(body)), portForwardHint)
	}
	return nil, fmt.Errorf("admin server %s: GET %s: %s: %s", a.base, path, resp.Status, strings.TrimSpace(string(body)))
}

// unwrapURLError drops the method and URL that *url.Error repeats.
func unwrapURLError(err error) error {
	var u interface{ Unwrap() error }
	if errors.As(err, &u) && u.Unwrap() != nil {
		return u.Unwrap()
	}
	return err
}

// age is a duration as kubectl prints an age: 42s, 5m, 3h, 2d.
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
