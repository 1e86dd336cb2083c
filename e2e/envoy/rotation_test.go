package envoy

import (
	"fmt"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

const rotationSvc = "ca-rotation"

func rotationObjects(ca *harness.Authority, be *backend) []object {
	objs := serviceWithEndpoints(rotationSvc, svcPort{name: "https", port: svcPortNumber, backendPort: be.port})
	objs = append(objs, caConfigMap("ca-rotation", ca.PEM))
	pol := policy{name: "rotation", caRefs: []caRef{{name: "ca-rotation"}}, hostname: hostAbc}
	pol.targets = []target{{svc: rotationSvc}}
	return append(objs, pol.object())
}

// caRotation: the ConfigMap moves to a new CA while the backend moves to a
// certificate from it; traffic recovers through an SDS update alone.
func caRotation(t *testing.T, e *env, p *pki, b *backends, s *summary) {
	cluster := clusterName(rotationSvc, svcPortNumber)
	view := e.waitCluster(t, cluster, activeTLS(hostAbc, b.rotating.port))
	if r := e.request(t, cluster, "/before-rotation"); r.Status != 200 {
		t.Fatalf("before rotation: want 200, got %s", r)
	}
	before, err := e.envoy.Stats()
	if err != nil {
		t.Fatal(err)
	}

	newCA := harness.NewAuthority(t, "rotated CA")
	issue(t, newCA, e.pkiDir, "rotated", harness.LeafSpec{}).WriteFiles(t, p.rotating.CertFile, p.rotating.KeyFile)
	if err := b.rotating.verifiesWith(newCA); err != nil {
		t.Fatalf("the backend does not serve the rotated certificate: %v", err)
	}
	writeManifests(t, e.manifestDir, "ca-rotation", rotationObjects(newCA, b.rotating)...)

	// First the SDS update of this cluster's CA reaches Envoy, then traffic
	// must recover.
	if view.caSecret == "" {
		t.Fatalf("cluster %s has no SDS validation secret: %s", cluster, view.raw)
	}
	sdsStat := "sds." + view.caSecret + ".update_success"
	sdsBefore := before[sdsStat]
	if err := waitSDSUpdate(e, view.caSecret, sdsBefore); err != nil {
		t.Errorf("no SDS update reached Envoy after the ConfigMap changed: %v", err)
	}
	start, failures := time.Now(), 0
	var last response
	err = harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		r, err := e.tryRequest(cluster, "/after-rotation")
		if err != nil {
			return err
		}
		last = r
		if r.Status != 200 || r.Echo.SNI != hostAbc {
			failures++
			return fmt.Errorf("got %s", r)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("traffic did not recover after the CA rotation: %v\n--- tlsplane log:\n%s", err, e.tlsplane.LogTail(15))
	}
	after, err := e.envoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	s.note("ca-rotation", "recovered %s after the SDS update, %d failed requests before; %s %d -> %d; %s",
		time.Since(start).Round(time.Millisecond), failures, sdsStat, sdsBefore, after[sdsStat], last)

	clusterNotRebuilt(t, e, cluster, view, before, after)
}

// clusterNotRebuilt fails t when Envoy rebuilt a cluster between the stats
// before and after, or cluster's configuration is no longer view's: what
// an SDS update must never cause. It returns cluster_modified's increase.
func clusterNotRebuilt(t *testing.T, e *env, cluster string, view clusterView, before, after map[string]int64) int64 {
	t.Helper()
	d := after["cluster_manager.cluster_modified"] - before["cluster_manager.cluster_modified"]
	if d != 0 {
		t.Errorf("Envoy rebuilt clusters for an SDS update: cluster_manager.cluster_modified moved by %d", d)
	}
	if now, err := e.envoy.cluster(cluster); err != nil || now.raw != view.raw {
		t.Errorf("cluster %s changed for an SDS update (err %v):\nbefore %s\nafter  %s", cluster, err, view.raw, now.raw)
	}
	return d
}

// waitSDSUpdate waits until Envoy applied an update of secret beyond count.
func waitSDSUpdate(e *env, secret string, count int64) error {
	stat := "sds." + secret + ".update_success"
	return harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		st, err := e.envoy.Stats()
		if err != nil {
			return err
		}
		if n := st[stat]; n <= count {
			return fmt.Errorf("%s still %d", stat, n)
		}
		return nil
	})
}

const overlapSvc = "ca-rotation-overlap"

func overlapObjects(bundle []byte, be *backend) []object {
	objs := serviceWithEndpoints(overlapSvc, svcPort{name: "https", port: svcPortNumber, backendPort: be.port})
	pol := policy{name: overlapSvc, targets: []target{{svc: overlapSvc}}, caRefs: []caRef{{name: "ca-" + overlapSvc}}, hostname: hostAbc}
	return append(objs, caConfigMap("ca-"+overlapSvc, bundle), pol.object())
}

// caRotationOverlap is the rotation an operator runs for zero downtime: add
// the new CA to the bundle, switch the backend, drop the old CA. Traffic
// flows the whole time and not one request may fail.
func caRotationOverlap(t *testing.T, e *env, p *pki, b *backends, s *summary) {
	cluster := clusterName(overlapSvc, svcPortNumber)
	view := e.waitCluster(t, cluster, activeTLS(hostAbc, b.overlap.port))
	if view.caSecret == "" {
		t.Fatalf("cluster %s has no SDS validation secret: %s", cluster, view.raw)
	}
	stat := "sds." + view.caSecret + ".update_success"
	updates := func() int64 {
		st, err := e.envoy.Stats()
		if err != nil {
			t.Fatal(err)
		}
		return st[stat]
	}
	loop := startTrafficLoop(e, cluster, "/overlap", 50*time.Millisecond, 60*time.Second)
	defer loop.Stop()

	newCA := harness.NewAuthority(t, "overlap CA")
	n := updates()
	writeManifests(t, e.manifestDir, overlapSvc, overlapObjects(append(append([]byte{}, p.ca.PEM...), newCA.PEM...), b.overlap)...)
	if err := waitSDSUpdate(e, view.caSecret, n); err != nil {
		t.Fatalf("step 1, both CAs: %v", err)
	}
	issue(t, newCA, e.pkiDir, "overlap-new", harness.LeafSpec{}).WriteFiles(t, p.overlap.CertFile, p.overlap.KeyFile)
	if err := b.overlap.verifiesWith(newCA); err != nil {
		t.Fatalf("step 2, the backend does not serve the new certificate: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	n = updates()
	writeManifests(t, e.manifestDir, overlapSvc, overlapObjects(newCA.PEM, b.overlap)...)
	if err := waitSDSUpdate(e, view.caSecret, n); err != nil {
		t.Fatalf("step 3, new CA only: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	sent, failures := loop.Stop()
	s.note("ca-rotation-with-overlap-zero-failures", "%d requests through three steps, %d failed", sent, len(failures))
	if len(failures) > 0 {
		t.Errorf("%d of %d requests failed during the rotation, first: %s", len(failures), sent, failures[0])
	}
	if sent < 10 {
		t.Errorf("only %d requests were sent during the rotation", sent)
	}
	if now, err := e.envoy.cluster(cluster); err != nil || now.raw != view.raw {
		t.Errorf("cluster %s changed during the rotation (err %v)", cluster, err)
	}
}
