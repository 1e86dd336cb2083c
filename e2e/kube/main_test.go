// Package kube tests tlsplane's Kubernetes mode against a real kube-apiserver
// (package e2e/apiserver): informers, status written back, leader election,
// and the served snapshot, with tlsplane run as the binary users run.
package kube

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
	"github.com/tlsplane/tlsplane/e2e/harness"
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
	buildDir, err := os.MkdirTemp("", "tlsplane-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/kube:", err)
		return 1
	}
	defer os.RemoveAll(buildDir) // where tlsplane is built when TLSPLANE_BIN is unset
	if tlsplaneBin, _, err = harness.TLSPlaneOrBuild(buildDir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e/kube:", err)
		return 1
	}
	api, err = apiserver.Start(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/kube: start API server:", err)
		return 1
	}
	defer api.Stop()
	// The experimental XBackend kinds beside the channel's CRDs: tlsplane
	// reads them whenever they are served.
	if err := apiserver.InstallXBackendCRDs(ctx, api.Config); err != nil {
		fmt.Fprintln(os.Stderr, "e2e/kube: install the XBackend CRDs:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e/kube: kube-apiserver ready with Gateway API CRDs in %s at %s\n", api.Ready.Round(time.Millisecond), api.URL)
	return m.Run()
}
