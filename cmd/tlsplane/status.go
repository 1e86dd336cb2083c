package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

const statusHelp = `Usage:
  tlsplane status [--admin ADDR] [-o table|json]
  tlsplane status policy NAMESPACE/NAME [--admin ADDR] [-o table|json]
  tlsplane status xbackend NAMESPACE/NAME [--admin ADDR] [-o table|json]
  tlsplane status xbackendtrafficpolicy NAMESPACE/NAME [--admin ADDR] [-o table|json]

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
The admin server answers these from loopback only; for a cluster:
  ` + portForwardHint + `
`

// portForwardHint is how an operator reaches a Pod's admin port.
const portForwardHint = "kubectl -n tlsplane-system port-forward deploy/tlsplane 19000"

var statusFlagGroups = []flagGroup{
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
}

func newStatusFlags() (*statusConfig, *flag.FlagSet) {
	cfg := &statusConfig{}
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.StringVar(&cfg.admin, "admin", "127.0.0.1:19000", "`ADDR` of tlsplane's admin server: host:port or a URL")
	fs.DurationVar(&cfg.timeout, "timeout", 5*time.Second, "bound on the request to the admin server")
	fs.StringVar(&cfg.format, "o", formatTable, "output format: table or json")
	return cfg, fs
}

// runStatus prints the connections view, or with "policy NS/NAME" the
// policy view, or with "xbackend NS/NAME" or "xbackendtrafficpolicy
// NS/NAME" that object's conditions.
func runStatus(args []string, stdout io.Writer) error {
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
	admin := &adminClient{base: adminBase(cfg.admin), client: &http.Client{Timeout: cfg.timeout}}
	switch {
	case len(positional) == 0:
		return printConnections(stdout, admin, cfg.format)
	case positional[0] == "policy" && len(positional) == 2:
		return printPolicy(stdout, admin, positional[1], cfg.format)
	case positional[0] == "policy":
		return errors.New("policy: want one NAMESPACE/NAME (tlsplane status --help)")
	}
	if k, ok := xKindOf(positional[0]); ok {
		if len(positional) != 2 {
			return fmt.Errorf("%s: want one NAMESPACE/NAME (tlsplane status --help)", k.arg)
		}
		return printXObject(stdout, admin, k, positional[1], cfg.format)
	}
	return fmt.Errorf("unknown argument %q: want nothing, or policy, xbackend or xbackendtrafficpolicy and NAMESPACE/NAME (tlsplane status --help)", positional[0])
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
}

// get returns the body of a 200 answer to path; every other outcome is an
// error that says what to do.
func (a *adminClient) get(path string) ([]byte, error) {
	resp, err := a.client.Get(a.base + path)
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
