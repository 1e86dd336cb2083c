package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlsplane/tlsplane/dirsource"
)

// --dir-resync reaches the directory source, defaults to its one minute,
// and refuses a walk interval that is not positive.
func TestDirResyncFlag(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	cfg, err := parseServeFlags([]string{"--dir", "."}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.dirSourceOptions(logger, prometheus.NewRegistry()).Resync; got != dirsource.DefaultResync {
		t.Errorf("default resync %s, want %s", got, dirsource.DefaultResync)
	}
	cfg, err = parseServeFlags([]string{"--dir", ".", "--dir-resync", "5m"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.dirSourceOptions(logger, prometheus.NewRegistry()).Resync; got != 5*time.Minute {
		t.Errorf("--dir-resync 5m gave the source %s", got)
	}
	for _, bad := range []string{"0s", "-1m"} {
		_, err := parseServeFlags([]string{"--dir", ".", "--dir-resync", bad}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--dir-resync") || !strings.Contains(err.Error(), "positive") {
			t.Errorf("--dir-resync %s: error %v, want one naming the flag", bad, err)
		}
	}
}
