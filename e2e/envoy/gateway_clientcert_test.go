package envoy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// The Gateway's backend client certificate (spec.tls.backend.
// clientCertificateRef) and the backend that requires one.
const (
	fileGatewayClient = "gw-client"
	fileMTLS          = "gw-mtls"
	svcMTLS           = "mtls"     // its policy names no client certificate: the Gateway's is presented
	svcMTLSOwn        = "mtls-own" // its policy names its own, which wins
	hostMTLS          = "mtls.gw.example"
	hostMTLSOwn       = "mtls-own.gw.example"
	gatewayClientName = "gw-client"
	// gatewayClientSDS is the SDS secret of gw/edge's certificate
	// (plan.GatewayClientCertificateSecretName).
	gatewayClientSDS = "GatewayClient/" + gwNS + "/" + gwName
)

// withBackendClientCertificate is gw naming Secret name as its backend
// client certificate.
func withBackendClientCertificate(gw object, name string) object {
	gw["spec"].(object)["tls"] = object{"backend": object{"clientCertificateRef": object{"group": "", "kind": "Secret", "name": name}}}
	return gw
}

// mtlsObjects: two Services on the backend that requires a client
// certificate, each with a policy trusting its CA; one policy names a
// client certificate of its own.
func mtlsObjects(p *gatewayPKI, be *backend) []object {
	var objs []object
	for _, svc := range []string{svcMTLS, svcMTLSOwn} {
		objs = append(objs, serviceWithEndpoints(svc, svcPort{name: "https", port: securePort, backendPort: be.port})...)
		pol := policy{name: svc, targets: []target{{svc: svc}}, caRefs: []caRef{{name: "ca-" + svcMTLS}}, hostname: sniRouted, sans: []san{{dns: hostOther}}}
		if svc == svcMTLSOwn {
			pol.options = map[string]string{"clientCertificateRef": "policy-client"}
		}
		objs = append(objs, pol.object())
	}
	objs = append(objs, caConfigMap("ca-"+svcMTLS, p.ca.PEM), tlsSecret(gwNS, "policy-client", p.policyClient))
	return inNamespace(gwNS, objs...)
}

// gatewayClientCertificate: a route to a TLS backend that requires a client
// certificate gets 200, and the backend saw the Gateway's certificate;
// Envoy's cluster names it over SDS.
func gatewayClientCertificate(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	r := e.await(t, hostMTLS, func() (response, error) { return e.freshGet(hostMTLS, "/gateway-client") }, clientSubject(b.mtls, "gateway-client"))
	cluster := clusterIn(gwNS, svcMTLS, securePort)
	view, err := (&envoyProxy{e.gwEnvoy}).cluster(cluster)
	if err != nil {
		t.Fatal(err)
	}
	s.note("gateway-client-certificate", "%s; cluster %s reads SDS %s: %v", r, cluster, gatewayClientSDS, strings.Contains(view.raw, gatewayClientSDS))
	if !strings.Contains(view.raw, gatewayClientSDS) {
		t.Errorf("cluster %s does not read the Gateway's certificate %s: %s", cluster, gatewayClientSDS, view.raw)
	}
}

// policyClientCertificateWins: a policy's own client certificate is
// presented, not the Gateway's.
func policyClientCertificateWins(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	r := e.await(t, hostMTLSOwn, func() (response, error) { return e.freshGet(hostMTLSOwn, "/policy-client") }, clientSubject(b.mtls, "policy-client"))
	s.note("policy-client-certificate-wins-over-gateway", "%s", r)
}

// gatewayClientRotation: a new certificate in the Gateway's Secret reaches
// the backend through an SDS update alone; no cluster is rebuilt.
func gatewayClientRotation(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	cluster := clusterIn(gwNS, svcMTLS, securePort)
	proxy := &envoyProxy{e.gwEnvoy}
	view, err := proxy.cluster(cluster)
	if err != nil {
		t.Fatal(err)
	}
	before, err := e.gwEnvoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	rotated := e.pki.clientCA.Issue(t, harness.LeafSpec{CommonName: "gateway-client-rotated", Client: true})
	writeManifests(t, e.manifestDir, fileGatewayClient, tlsSecret(gwNS, gatewayClientName, rotated))
	stat := "sds." + gatewayClientSDS + ".update_success"
	if err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		st, err := e.gwEnvoy.Stats()
		if err != nil {
			return err
		}
		if st[stat] <= before[stat] {
			return fmt.Errorf("%s still %d", stat, st[stat])
		}
		return nil
	}); err != nil {
		t.Fatalf("no SDS update of %s reached Envoy after the Secret changed: %v", gatewayClientSDS, err)
	}
	r := e.await(t, hostMTLS, func() (response, error) { return e.freshGet(hostMTLS, "/gateway-client-rotated") }, clientSubject(b.mtls, "gateway-client-rotated"))
	after, err := e.gwEnvoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	modified := after["cluster_manager.cluster_modified"] - before["cluster_manager.cluster_modified"]
	if modified != 0 {
		t.Errorf("Envoy rebuilt clusters for an SDS update: cluster_manager.cluster_modified moved by %d", modified)
	}
	if now, err := proxy.cluster(cluster); err != nil || now.raw != view.raw {
		t.Errorf("cluster %s changed for an SDS update (err %v):\nbefore %s\nafter  %s", cluster, err, view.raw, now.raw)
	}
	s.note("gateway-client-certificate-rotation", "backend saw %q, then %q after the SDS update of %s; cluster_manager.cluster_modified +%d; %s",
		"gateway-client", r.Echo.ClientSubject, gatewayClientSDS, modified, r)
}

// gatewayClientUnusable: a Gateway certificate whose key does not match
// makes the Gateway ResolvedRefs=False InvalidClientCertificateRef; the
// route to the backend without a certificate of its own is answered 503
// and the backend gets nothing (never without the certificate), while the
// policy with its own certificate is still served. Putting a usable pair
// back serves the route again.
func gatewayClientUnusable(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	good := e.pki.clientCA.Issue(t, harness.LeafSpec{CommonName: "gateway-client-restored", Client: true})
	other := e.pki.clientCA.Issue(t, harness.LeafSpec{CommonName: "unrelated", Client: true})
	mismatched := &harness.Leaf{CertPEM: good.CertPEM, KeyPEM: other.KeyPEM}
	writeManifests(t, e.manifestDir, fileGatewayClient, tlsSecret(gwNS, gatewayClientName, mismatched))
	cond := awaitGatewayCondition(t, e, "ResolvedRefs", func(c condition) bool { return c.Reason == "InvalidClientCertificateRef" })
	if cond.Status != "False" || !strings.Contains(cond.Message, gwNS+"/"+gatewayClientName) {
		t.Errorf("Gateway ResolvedRefs = %+v, want False naming Secret %s/%s", cond, gwNS, gatewayClientName)
	}
	accepted := gatewayCondition(t, e, "Accepted")
	if accepted == nil || accepted.Status != "True" {
		t.Errorf("Gateway Accepted = %+v, want True: a bad backend certificate does not un-accept the Gateway", accepted)
	}
	e.await(t, hostMTLS, func() (response, error) { return e.freshGet(hostMTLS, "/gateway-client-unusable") }, func(r response) error {
		if r.Status == 200 {
			return fmt.Errorf("still 200 (%s)", r.Echo.ClientSubject)
		}
		return status(503)(r)
	})
	beforeCounts := b.mtls.counts(t)
	r, err := e.freshGet(hostMTLS, "/gateway-client-unusable")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != 503 {
		t.Errorf("want 503, got %s", r)
	}
	afterCounts := b.mtls.counts(t)
	own, err := e.freshGet(hostMTLSOwn, "/policy-client-still")
	if err != nil {
		t.Fatal(err)
	}
	if own.Status != 200 || own.Echo.ClientSubject != "policy-client" {
		t.Errorf("the policy with its own certificate: %s, want 200 with policy-client", own)
	}
	s.note("gateway-client-certificate-unusable-fails-closed", "Gateway ResolvedRefs=%s %s (%q); %s; backend requests %d -> %d; the policy's own certificate: %s",
		cond.Status, cond.Reason, cond.Message, r, beforeCounts.Requests, afterCounts.Requests, own)
	if afterCounts.Requests != beforeCounts.Requests {
		t.Errorf("backend %s received %d requests through the fail-closed route", b.mtls.name, afterCounts.Requests-beforeCounts.Requests)
	}
	writeManifests(t, e.manifestDir, fileGatewayClient, tlsSecret(gwNS, gatewayClientName, good))
	// https-cross lacks its ReferenceGrant now: ListenersNotResolved.
	awaitGatewayCondition(t, e, "ResolvedRefs", func(c condition) bool { return c.Reason != "InvalidClientCertificateRef" })
	e.await(t, hostMTLS, func() (response, error) { return e.freshGet(hostMTLS, "/gateway-client-restored") }, clientSubject(b.mtls, "gateway-client-restored"))
}

// clientSubject: answered 200 by be, which saw the client certificate cn.
func clientSubject(be *backend, cn string) func(response) error {
	return func(r response) error {
		if err := from(be)(r); err != nil {
			return err
		}
		if r.Echo.ClientSubject != cn {
			return fmt.Errorf("backend saw client certificate %q, want %q", r.Echo.ClientSubject, cn)
		}
		return nil
	}
}

// gatewayCondition is the condition of gw/edge from /debug/status; nil
// when absent.
func gatewayCondition(t *testing.T, e *gwEnv, typ string) *condition {
	t.Helper()
	body, err := harness.HTTPGet(e.tlsplaneURL("/debug/status"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Gateways []struct {
			Namespace, Name string
			Status          struct{ Conditions []condition }
		}
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("/debug/status: %v", err)
	}
	for _, g := range doc.Gateways {
		if g.Namespace != gwNS || g.Name != gwName {
			continue
		}
		for _, c := range g.Status.Conditions {
			if c.Type == typ {
				return &c
			}
		}
	}
	return nil
}

// awaitGatewayCondition waits until gw/edge's condition typ is as want
// says.
func awaitGatewayCondition(t *testing.T, e *gwEnv, typ string, want func(condition) bool) *condition {
	t.Helper()
	var last *condition
	err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		last = gatewayCondition(t, e, typ)
		if last == nil || !want(*last) {
			return fmt.Errorf("%s = %+v", typ, last)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Gateway %s/%s: %s never came as wanted: %v", gwNS, gwName, typ, err)
	}
	return last
}

// freshGet is httpGet asking the backend to close the connection after
// answering (X-Echo-Close), so Envoy's next request to it handshakes
// again: what presents a rotated client certificate, which Envoy uses
// for new connections only.
func (e *gwEnv) freshGet(host, path string) (response, error) {
	return e.get(e.ports.http, host, path, map[string]string{"X-Echo-Close": "1"}, "")
}
