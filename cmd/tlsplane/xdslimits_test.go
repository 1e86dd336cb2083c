package main

import (
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/xds"
)

func TestXDSLimitFlags(t *testing.T) {
	cfg, err := parseServeFlags([]string{"--dir", ".", "--xds-handshake-timeout", "2s", "--xds-max-connections", "300", "--xds-max-handshakes-per-source=4"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.xdsLimits.handshakeTimeout != 2*time.Second {
		t.Errorf("handshake timeout %s, want 2s", cfg.xdsLimits.handshakeTimeout)
	}
	got, err := cfg.xdsLimits.limits()
	if want := (xds.ConnectionLimits{Connections: 300, PerSource: 37, Handshakes: 75, HandshakesPerSource: 4}); err != nil || got != want {
		t.Errorf("limits %+v, %v; want %+v", got, err, want)
	}
	// The defaults follow this process's file limit.
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	cfg, _ = parseServeFlags([]string{"--dir", "."}, io.Discard)
	got, err = cfg.xdsLimits.limits()
	if want, _ := xds.DerivedLimits(xds.ConnectionLimits{}, rl.Cur); err != nil || got != want || cfg.xdsLimits.handshakeTimeout != xds.DefaultHandshakeTimeout {
		t.Errorf("defaults %+v, %s, %v; want %+v, %s for the file limit %d", got, cfg.xdsLimits.handshakeTimeout, err, want, xds.DefaultHandshakeTimeout, rl.Cur)
	}
	for _, bad := range [][]string{
		{"--xds-handshake-timeout", "10ms"},
		{"--xds-max-connections", "-1"},
		{"--xds-max-handshakes-per-source", "-3"},
	} {
		if _, err := parseServeFlags(append([]string{"--dir", "."}, bad...), io.Discard); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%q: error %v, want one naming %s", bad, err, bad[0])
		}
	}
}
