package envoy

import (
	"fmt"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

const clientRotationSvc = "client-rotation"

// clientRotationObjects: a policy on the mtls backend presenting the
// client certificate in Secret rotating-client, which holds client.
func clientRotationObjects(p *pki, be *backend, client *harness.Leaf) []object {
	objs := serviceWithEndpoints(clientRotationSvc, svcPort{name: "https", port: svcPortNumber, backendPort: be.port})
	objs = append(objs, caConfigMap("ca-"+clientRotationSvc, p.ca.PEM), tlsSecret(ns, "rotating-client", client))
	pol := policy{name: clientRotationSvc, caRefs: []caRef{{name: "ca-" + clientRotationSvc}}, hostname: hostAbc,
		options: map[string]string{"clientCertificateRef": "rotating-client"}}
	pol.targets = []target{{svc: clientRotationSvc}}
	return append(objs, pol.object())
}

// clientRotation: a new certificate in the client Secret reaches the
// backend through an SDS update alone; no cluster is rebuilt.
func clientRotation(t *testing.T, e *env, p *pki, b *backends, s *summary) {
	cluster := clusterName(clientRotationSvc, svcPortNumber)
	view := e.waitCluster(t, cluster, activeTLS(hostAbc, b.mtls.port))
	if r := e.request(t, cluster, "/before-client-rotation"); r.Status != 200 || r.Echo.ClientSubject != "envoy-client" {
		t.Fatalf("before the rotation: want 200 with client certificate envoy-client, got %s", r)
	}
	before, err := e.envoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	secret := "Client/" + ns + "/rotating-client"
	rotated := p.clientCA.Issue(t, harness.LeafSpec{CommonName: "envoy-client-rotated", Client: true})
	writeManifests(t, e.manifestDir, clientRotationSvc, clientRotationObjects(p, b.mtls, rotated)...)
	if err := waitSDSUpdate(e, secret, before["sds."+secret+".update_success"]); err != nil {
		t.Fatalf("no SDS update of %s reached Envoy after the Secret changed: %v", secret, err)
	}
	var last response
	err = harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		r, err := e.tryRequest(cluster, "/after-client-rotation")
		if err != nil {
			return err
		}
		last = r
		if r.Status != 200 || r.Echo.ClientSubject != "envoy-client-rotated" {
			return fmt.Errorf("got %s", r)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the backend does not see the rotated client certificate: %v\n--- tlsplane log:\n%s", err, e.tlsplane.LogTail(15))
	}
	after, err := e.envoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	modified := clusterNotRebuilt(t, e, cluster, view, before, after)
	s.note("client-certificate-rotation", "backend saw %q, then %q after the SDS update of %s; cluster_manager.cluster_modified +%d; %s",
		"envoy-client", last.Echo.ClientSubject, secret, modified, last)
}
