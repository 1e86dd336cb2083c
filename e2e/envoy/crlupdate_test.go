package envoy

import (
	"fmt"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

const crlUpdateSvc = "crl-update"

// crlUpdateObjects: a policy on the main backend whose revocation list
// is crl.
func crlUpdateObjects(p *pki, be *backend, crl []byte) []object {
	objs := serviceWithEndpoints(crlUpdateSvc, svcPort{name: "https", port: svcPortNumber, backendPort: be.port})
	objs = append(objs, caConfigMap("ca-"+crlUpdateSvc, p.ca.PEM), crlConfigMap(crlUpdateSvc, crl))
	pol := policy{name: crlUpdateSvc, caRefs: []caRef{{name: "ca-" + crlUpdateSvc}}, hostname: hostAbc,
		options: map[string]string{"crlRef": "ConfigMap/" + crlUpdateSvc}}
	pol.targets = []target{{svc: crlUpdateSvc}}
	return append(objs, pol.object())
}

// crlUpdate: a new list revoking the backend's certificate reaches Envoy
// through an SDS update alone; from then on the backend is refused, and no
// cluster is rebuilt.
func crlUpdate(t *testing.T, e *env, p *pki, b *backends, s *summary) {
	cluster := clusterName(crlUpdateSvc, svcPortNumber)
	view := e.waitCluster(t, cluster, activeTLS(hostAbc, b.main.port))
	if r := e.request(t, cluster, "/before-revocation"); r.Status != 200 {
		t.Fatalf("before the revocation: want 200, got %s", r)
	}
	if view.caSecret == "" {
		t.Fatalf("cluster %s has no SDS validation secret: %s", cluster, view.raw)
	}
	before, err := e.envoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	writeManifests(t, e.manifestDir, crlUpdateSvc, crlUpdateObjects(p, b.main, p.ca.CRL(t, time.Now().Add(24*time.Hour), p.revoked, p.main))...)
	if err := waitSDSUpdate(e, view.caSecret, before["sds."+view.caSecret+".update_success"]); err != nil {
		t.Fatalf("no SDS update of %s reached Envoy after the list changed: %v", view.caSecret, err)
	}
	var last response
	err = harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		r, err := e.tryRequest(cluster, "/after-revocation")
		if err != nil {
			return err
		}
		last = r
		if r.Status < 500 {
			return fmt.Errorf("got %s", r)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the revoked backend is still accepted: %v\n--- tlsplane log:\n%s", err, e.tlsplane.LogTail(15))
	}
	after, err := e.envoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	modified := clusterNotRebuilt(t, e, cluster, view, before, after)
	s.note("crl-update-revokes-the-backend", "200 before; after the SDS update of %s: %s; %s; cluster_manager.cluster_modified +%d",
		view.caSecret, last, sslDelta(before, after, cluster), modified)
}
