package envoy

import (
	"fmt"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// configMapDeleted: a working policy whose CA ConfigMap disappears must fail
// closed, never fall back to plaintext or keep the CA that was deleted.
func configMapDeleted(t *testing.T, e *env, p *pki, b *backends, s *summary) {
	const svc = "configmap-deleted"
	cluster := clusterName(svc, svcPortNumber)
	pol := policy{name: "deleted", targets: []target{{svc: svc}}, caRefs: []caRef{{name: "ca-deleted"}}, hostname: hostAbc}
	objs := serviceWithEndpoints(svc, svcPort{name: "https", port: svcPortNumber, backendPort: b.main.port})
	writeManifests(t, e.manifestDir, svc, append(objs, caConfigMap("ca-deleted", p.ca.PEM), pol.object())...)
	e.waitCluster(t, cluster, activeTLS(hostAbc, b.main.port))
	if r := e.request(t, cluster, "/before-delete"); r.Status != 200 {
		t.Fatalf("before deleting the ConfigMap: want 200, got %s", r)
	}

	writeManifests(t, e.manifestDir, svc, append(objs, pol.object())...)
	var last response
	err := harness.Eventually(applyTimeout, 200*time.Millisecond, func() error {
		r, err := e.tryRequest(cluster, "/after-delete")
		if err != nil {
			return err
		}
		last = r
		if r.Status == 200 {
			return fmt.Errorf("still 200: %s", r)
		}
		return nil
	})
	s.note("configmap-deleted-fails-closed", "%d after the ConfigMap was deleted", last.Status)
	if err != nil {
		t.Fatalf("the port kept serving after its CA ConfigMap was deleted: %v", err)
	}
	before := b.main.counts(t)
	r := e.request(t, cluster, "/after-delete")
	after := b.main.counts(t)
	if r.Status < 500 {
		t.Errorf("want a 5xx, got %s", r)
	}
	if after.Requests != before.Requests || after.Plaintext != before.Plaintext {
		t.Errorf("backend received traffic after its CA was deleted: before %+v, after %+v", before, after)
	}
}
