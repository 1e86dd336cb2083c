// Package kube tests tlsplane's Kubernetes mode against a real kube-apiserver
// (package e2e/apiserver): informers, status written back, leader election,
// and the served snapshot, with tlsplane run as the binary users run.
package kube

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
)

// api is the API server every test of this package shares; each test works
// in namespaces of its own.
var api *apiserver.Server

// tlsplaneBin is the binary under test: TLSPLANE_BIN (make e2e-kube), or
// one built here when the tests run on their own.
var tlsplaneBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var err error
	if tlsplaneBin, err = tlsplaneBinary(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e/kube:", err)
		return 1
	}
	if os.Getenv("TLSPLANE_BIN") == "" {
		defer os.RemoveAll(filepath.Dir(tlsplaneBin)) // built here, in the temp directory
	}
	api, err = apiserver.Start(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/kube: start API server:", err)
		return 1
	}
	defer api.Stop()
	fmt.Fprintf(os.Stderr, "e2e/kube: kube-apiserver ready with Gateway API CRDs in %s at %s\n", api.Ready.Round(time.Millisecond), api.URL)
	return m.Run()
}

func tlsplaneBinary() (string, error) {
	if bin := os.Getenv("TLSPLANE_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("TLSPLANE_BIN: %w", err)
		}
		return bin, nil
	}
	dir, err := os.MkdirTemp("", "tlsplane-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "tlsplane")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/tlsplane/tlsplane/cmd/tlsplane")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build tlsplane (or set TLSPLANE_BIN): %w", err)
	}
	return bin, nil
}
