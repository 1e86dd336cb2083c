package envoy

import "testing"

// routedPolicy: a route sends to a Service a BackendTLSPolicy targets;
// Envoy speaks TLS to it with the policy's SNI, and verifies the policy's
// CA and subjectAltName (other.example.com, which the SNI is not).
func routedPolicy(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	r := e.await(t, "backend-tls.example", func() (response, error) {
		return e.httpGet("backend-tls.example", "/tls")
	}, from(b.secure))
	cluster := clusterIn(gwNS, svcSecure, securePort)
	view, err := (&envoyProxy{e.gwEnvoy}).cluster(cluster)
	if err != nil {
		t.Fatal(err)
	}
	s.note("backendtlspolicy-on-routed-service", "%s; cluster %s tls=%v ca=%s", r, cluster, view.hasTLS, view.caSecret)
	if r.Echo.SNI != sniRouted {
		t.Errorf("backend saw SNI %q, want the policy's %q", r.Echo.SNI, sniRouted)
	}
	if r.Echo.TLSVersion == "" {
		t.Errorf("backend saw no TLS")
	}
	if !view.hasTLS || view.sni != sniRouted || view.caSecret == "" {
		t.Errorf("cluster %s: %s, CA secret %q; want TLS with SNI %q and a CA over SDS", cluster, view, view.caSecret, sniRouted)
	}
	if c := b.secure.counts(t); c.Plaintext != 0 {
		t.Errorf("backend %s received %d plaintext requests", b.secure.name, c.Plaintext)
	}
}

// routedFailClosed: a route to a Service whose policy Envoy cannot satisfy
// (the CA did not sign the backend's certificate, or the SAN is not in it)
// is answered 503: the handshake fails on the TLS counter failStat, and
// the backend gets no request, plaintext or not.
func routedFailClosed(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary, name, host, svc, failStat string) {
	cluster := clusterIn(gwNS, svc, securePort)
	before := b.sentinel.counts(t)
	get := func() (response, error) { return e.httpGet(host, "/fail-closed") }
	e.await(t, host, get, func(r response) error {
		if r.Status == 200 {
			t.Fatalf("%s: answered 200 by %s: a policy that cannot be satisfied let a request through", host, r.Echo.Name)
		}
		return status(503)(r)
	})
	statsBefore, err := e.gwEnvoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	r, err := get()
	if err != nil {
		t.Fatal(err)
	}
	statsAfter, err := e.gwEnvoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	after := b.sentinel.counts(t)
	s.note(name, "%d from Envoy; cluster %s TLS counters: %s", r.Status, cluster, sslDelta(statsBefore, statsAfter, cluster))
	if r.Status != 503 {
		t.Errorf("want 503, got %s", r)
	}
	stat := "cluster." + cluster + "." + failStat
	if statsAfter[stat] <= statsBefore[stat] {
		t.Errorf("Envoy's %s did not move (%d -> %d): the request failed for another reason; TLS stats: %s",
			stat, statsBefore[stat], statsAfter[stat], sslStats(statsAfter, cluster))
	}
	if after.Requests != before.Requests || after.Plaintext != before.Plaintext {
		t.Errorf("backend %s received traffic through a fail-closed route: before %+v, after %+v", b.sentinel.name, before, after)
	}
}
