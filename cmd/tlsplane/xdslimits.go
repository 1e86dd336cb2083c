package main

import (
	"errors"
	"flag"
	"fmt"
	"syscall"
	"time"

	"github.com/tlsplane/tlsplane/xds"
)

// xdsLimitFlags bound the xDS port: how long a handshake may take and how
// many connections may be open, so that clients that never authenticate
// cannot exhaust the process's file descriptors or memory.
type xdsLimitFlags struct {
	handshakeTimeout time.Duration
	given            xds.ConnectionLimits
}

var xdsLimitsGroup = flagGroup{"Limits of the xDS port", []string{
	"xds-handshake-timeout", "xds-max-connections", "xds-max-connections-per-source", "xds-max-handshakes", "xds-max-handshakes-per-source",
}}

func registerXDSLimitFlags(fs *flag.FlagSet) *xdsLimitFlags {
	f := &xdsLimitFlags{}
	fs.DurationVar(&f.handshakeTimeout, "xds-handshake-timeout", xds.DefaultHandshakeTimeout, "a connection that has not completed its TLS handshake and HTTP/2 preface within this long is closed")
	fs.IntVar(&f.given.Connections, "xds-max-connections", 0, fmt.Sprintf("open xDS connections, handshaking or established; 0: derived from the file limit (RLIMIT_NOFILE) at start, what it leaves once 64 + 1/8 of it is kept for the rest of tlsplane, at most %d", xds.DefaultMaxConnections))
	fs.IntVar(&f.given.PerSource, "xds-max-connections-per-source", 0, "open xDS connections from one client IP address; 0: an eighth of --xds-max-connections")
	fs.IntVar(&f.given.Handshakes, "xds-max-handshakes", 0, "xDS connections still in their handshake; when full, the oldest is closed for a new one, so stalled clients never keep an Envoy out; 0: a quarter of --xds-max-connections")
	fs.IntVar(&f.given.HandshakesPerSource, "xds-max-handshakes-per-source", 0, "xDS connections still in their handshake from one client IP address (the oldest is closed for a new one); 0: a sixteenth of --xds-max-handshakes")
	return f
}

// check refuses what no file limit makes right, before anything starts.
func (f *xdsLimitFlags) check() error {
	if f.handshakeTimeout < 100*time.Millisecond {
		return fmt.Errorf("--xds-handshake-timeout %s: want at least 100ms", f.handshakeTimeout)
	}
	for _, v := range []struct {
		name  string
		value int
	}{
		{"xds-max-connections", f.given.Connections}, {"xds-max-connections-per-source", f.given.PerSource},
		{"xds-max-handshakes", f.given.Handshakes}, {"xds-max-handshakes-per-source", f.given.HandshakesPerSource},
	} {
		if v.value < 0 {
			return fmt.Errorf("--%s %d: want 0 (derived) or more", v.name, v.value)
		}
	}
	return nil
}

// limits are the flags completed for the process's file limit, which Go
// has already raised from the soft to the hard limit at start.
func (f *xdsLimitFlags) limits() (xds.ConnectionLimits, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return xds.ConnectionLimits{}, fmt.Errorf("reading the file limit (RLIMIT_NOFILE): %w", err)
	}
	if rl.Cur == 0 {
		return xds.ConnectionLimits{}, errors.New("the file limit (RLIMIT_NOFILE) is 0")
	}
	return xds.DerivedLimits(f.given, rl.Cur)
}
