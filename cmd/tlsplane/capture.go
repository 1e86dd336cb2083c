package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tlsplane/tlsplane/capture"
)

const captureHelp = `Usage:
  tlsplane capture [--sidecar-uid UID] [--port PORT] [--exclude-ports P,...] [--netns PATH]
  tlsplane capture --remove [--netns PATH]
  tlsplane capture --dry-run [flags]

The mesh's init step (docs/mesh.md): programs the network namespace (the
current one, a Pod's init container's, unless --netns) so outbound TCP
from every UID but the sidecar's, and not to loopback, is redirected to
the sidecar's capture listener on 127.0.0.1:PORT. The rules are an
nftables table of their own, ip ` + capture.TableName + `, programmed over
netlink (no nft binary needed; NET_ADMIN is). --remove deletes that table,
leaving the mesh; --dry-run prints the rules without touching the kernel.
`

var captureFlagGroups = []flagGroup{
	{"Capture", []string{"sidecar-uid", "port", "exclude-ports", "netns"}},
	{"Mode", []string{"remove", "dry-run"}},
}

// captureFlags are the command's flags.
type captureFlags struct {
	uid, port      uint
	exclude, netns string
	remove, dryRun bool
}

func newCaptureFlags() (*captureFlags, *flag.FlagSet) {
	f := &captureFlags{}
	uid, port, exclude, netns, remove, dryRun := &f.uid, &f.port, &f.exclude, &f.netns, &f.remove, &f.dryRun
	fs := flag.NewFlagSet("capture", flag.ContinueOnError)
	fs.UintVar(uid, "sidecar-uid", capture.DefaultSidecarUID, "the sidecar's UID: its own connections are never redirected")
	fs.UintVar(port, "port", capture.DefaultPort, "the sidecar's capture listener port on 127.0.0.1 (tlsplane sidecar-bootstrap --capture-port)")
	fs.StringVar(exclude, "exclude-ports", "", "comma-separated destination TCP ports never redirected")
	fs.StringVar(netns, "netns", "", "the network namespace to program, a path such as /var/run/netns/NAME; the current one when empty")
	fs.BoolVar(remove, "remove", false, "delete the capture's table instead (leaving the mesh)")
	fs.BoolVar(dryRun, "dry-run", false, "print the rules and change nothing")
	return f, fs
}

func runCapture(args []string, stdout io.Writer) error {
	f, fs := newCaptureFlags()
	positional, err := parseFlags(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, fs, captureHelp, captureFlagGroups)
			return nil
		}
		return fmt.Errorf("%w (tlsplane capture --help lists the flags)", err)
	}
	if len(positional) > 0 {
		return fmt.Errorf("unexpected arguments %q: every input is a flag (tlsplane capture --help)", positional)
	}
	cfg, err := captureConfig(f.uid, f.port, f.exclude)
	if err != nil {
		return err
	}
	if f.dryRun {
		lines, err := capture.Describe(cfg)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "table ip %s, chain on the nat output hook:\n  %s\n", capture.TableName, strings.Join(lines, "\n  "))
		return nil
	}
	n, err := capture.Open(f.netns)
	if err != nil {
		return err
	}
	defer n.Close()
	if f.remove {
		removed, err := n.Remove()
		if err != nil {
			return err
		}
		if !removed {
			fmt.Fprintf(stdout, "no table ip %s: nothing was captured\n", capture.TableName)
			return nil
		}
		fmt.Fprintf(stdout, "removed table ip %s: outbound TCP no longer reaches the sidecar\n", capture.TableName)
		return nil
	}
	if err := n.Apply(cfg); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "table ip %s: TCP not from UID %d and not to 127.0.0.0/8 is redirected to 127.0.0.1:%d\n", capture.TableName, cfg.SidecarUID, cfg.Port)
	return nil
}

// captureConfig checks the flags' ranges; capture checks the rest.
func captureConfig(uid, port uint, exclude string) (capture.Config, error) {
	if uid > 1<<32-1 {
		return capture.Config{}, fmt.Errorf("--sidecar-uid %d: not a UID", uid)
	}
	if port > 65535 {
		return capture.Config{}, fmt.Errorf("--port %d: want 1-65535", port)
	}
	cfg := capture.Config{SidecarUID: uint32(uid), Port: uint16(port)}
	for _, p := range strings.Split(exclude, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return capture.Config{}, fmt.Errorf("--exclude-ports: %q is not a port", p)
		}
		cfg.ExcludePorts = append(cfg.ExcludePorts, uint16(n))
	}
	return cfg, nil
}
