package perf

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// servedDir is tlsplane serving a directory of n policy-targeted Services
// to one real Envoy, both running.
type servedDir struct {
	tp, envoy              *harness.Process
	admin                  adminClient
	xdsPort, tlsplaneAdmin int
}

// serveDir starts tlsplane on manifests and an Envoy of apiType on it, and
// waits until Envoy holds every cluster (plus its static xDS cluster), none
// warming, and has applied every CA secret: at 10,000 clusters Envoy is
// still subscribing to secrets long after its clusters are active, and a
// change measured meanwhile would measure that backlog.
// Envoy keeps the load-assignment stats of the clusters named in watched.
func serveDir(t testing.TB, dir, manifests, tlsplaneBin, envoyBin, apiType string, n int, watched ...string) servedDir {
	t.Helper()
	return serveFleetWith(t, dir, manifests, tlsplaneBin, envoyBin, apiType, n, plainFleet, nil, watched...)
}

// plainFleet is the fleet of a measurement's Envoy that is no Gateway's.
const plainFleet = "perf"

// serveFleet is serveDir with an Envoy of fleet (a Gateway's <ns>/<name>
// takes that Gateway's listeners too, on loopback).
func serveFleet(t testing.TB, dir, manifests, tlsplaneBin, envoyBin, apiType string, n int, fleet string, watched ...string) servedDir {
	t.Helper()
	return serveFleetWith(t, dir, manifests, tlsplaneBin, envoyBin, apiType, n, fleet, nil, watched...)
}

// serveFleetWith is serveFleet with more of tlsplane serve's flags.
func serveFleetWith(t testing.TB, dir, manifests, tlsplaneBin, envoyBin, apiType string, n int, fleet string, tlsplaneArgs []string, watched ...string) servedDir {
	t.Helper()
	s := servedDir{xdsPort: harness.FreePort(t), tlsplaneAdmin: harness.FreePort(t)}
	envoyAdmin := harness.FreePort(t)
	args := append([]string{"serve", "--dir", manifests,
		"--xds-address", "127.0.0.1:" + strconv.Itoa(s.xdsPort),
		"--admin-address", "127.0.0.1:" + strconv.Itoa(s.tlsplaneAdmin), "--listener-address", "127.0.0.1", "--log-level", "warn"}, tlsplaneArgs...)
	s.tp = harness.Start(t, dir, "tlsplane", tlsplaneBin, args...)
	bootstrapPath := filepath.Join(dir, "envoy.json")
	writeJSON(t, bootstrapPath, bootstrap(fleet, apiType, s.xdsPort, envoyAdmin, watched...))
	s.envoy = harness.Start(t, dir, "envoy", envoyBin, "-c", bootstrapPath, "--disable-hot-restart",
		"--concurrency", "1", "-l", "warn")
	s.admin = adminClient{base: "http://127.0.0.1:" + strconv.Itoa(envoyAdmin)}

	if err := harness.Eventually(10*time.Minute, 50*time.Millisecond, func() error {
		if s.tp.Exited() || s.envoy.Exited() {
			return errors.New("tlsplane or Envoy exited")
		}
		st, err := s.admin.stats(`^cluster_manager\.(active|warming)_clusters$`)
		if err != nil {
			return err
		}
		if st["cluster_manager.active_clusters"] != int64(n+1) || st["cluster_manager.warming_clusters"] != 0 {
			return fmt.Errorf("active=%d warming=%d", st["cluster_manager.active_clusters"], st["cluster_manager.warming_clusters"])
		}
		return nil
	}); err != nil {
		t.Fatalf("Envoy never held the %d clusters: %v\n%s\n%s", n, err, s.tp.LogTail(40), s.envoy.LogTail(40))
	}
	if err := harness.Eventually(10*time.Minute, 100*time.Millisecond, func() error {
		st, err := s.admin.stats(`^sds\..*\.update_success$`)
		if err != nil {
			return err
		}
		applied := 0
		for _, v := range st {
			if v > 0 {
				applied++
			}
		}
		if applied < n {
			return fmt.Errorf("%d of %d CA secrets applied", applied, n)
		}
		return nil
	}); err != nil {
		t.Fatalf("Envoy never applied the %d CA secrets: %v\n%s\n%s", n, err, s.tp.LogTail(40), s.envoy.LogTail(40))
	}
	return s
}

// measuredBinaries are tlsplane and Envoy for a measurement its flag asked
// for: missing, it fails rather than skips.
func measuredBinaries(t testing.TB) (tlsplane, envoy string) {
	t.Helper()
	tlsplane, err := harness.TLSPlaneBinary()
	if err != nil {
		t.Fatal(err)
	}
	envoy, err = harness.EnvoyBinary()
	if err != nil {
		t.Fatal(err)
	}
	return tlsplane, envoy
}
