package envoy

import (
	"fmt"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// dnsFollowTimeout bounds how long new connections may keep going to the
// old address after the DNS answer changed: Envoy's default refresh of a
// LOGICAL_DNS cluster (dns_refresh_rate 5 s) plus the TTL, with room for
// a loaded machine.
const dnsFollowTimeout = 15 * time.Second

// TestDNSChangeFollowed proves a LOGICAL_DNS cluster with a real DNS
// server: an ExternalName Service names a host only the test's CoreDNS
// knows (harness.StartDNS), the Gateway's Envoy resolves it through that
// server alone (EnvoyOptions.DNSResolver) and reaches the backend on
// 127.0.0.1; the record then moves to 127.0.0.2, where a second backend
// listens on the same port, and new connections follow within
// dnsFollowTimeout, and stay there.
func TestDNSChangeFollowed(t *testing.T) {
	const (
		dnsNS    = "dns"
		hostname = "pay.tlsplane-e2e.test" // .test: a name no real resolver answers
		host     = "pay.dns.example"
	)
	e := newEnvIn(t, "GRPC", "dns")
	e.serveArgs = []string{"--listener-address", "127.0.0.1"}
	dns := harness.StartDNS(t, e.logDir, harness.DNSRecords{hostname: {"127.0.0.1"}})
	port := harness.FreePort(t)
	first := startBackend(t, e, "dns-first", backendOpts{plain: true, port: port})
	second := startBackend(t, e, "dns-second", backendOpts{plain: true, port: port, ip: "127.0.0.2"})

	listenerPort := harness.FreePort(t)
	writeManifests(t, e.manifestDir, "dns",
		gatewayClass(gwClass, controller),
		addressed(gateway(dnsNS, "edge", gwClass, gwListener{name: "http", protocol: "HTTP", port: listenerPort})),
		object{
			"apiVersion": "v1", "kind": "Service",
			"metadata": object{"namespace": dnsNS, "name": "pay"},
			"spec": object{"type": "ExternalName", "externalName": hostname,
				"ports": []object{{"name": "http", "port": port, "protocol": "TCP"}}},
		},
		httpRoute{namespace: dnsNS, name: "pay", gateway: "edge", section: "http",
			rules: []routeRule{{backends: []backendRef{{name: "pay", port: port}}}}}.object(),
	)
	e.startTLSPlane(t)
	harness.StartEnvoy(t, harness.EnvoyOptions{
		Bin: e.envoyBin, LogDir: e.logDir, Name: "envoy-dns", APIType: e.apiType,
		NodeID: "dns-envoy", Fleet: dnsNS + "/edge", XDSAddress: fmt.Sprintf("127.0.0.1:%d", e.xdsPort),
		GatewayListeners: true, WaitReady: true, DNSResolver: dns.Addr,
	})
	g := &gwEnv{env: e}
	// X-Echo-Close: the backend closes every connection after answering,
	// so each request opens a new one to the address Envoy resolved last.
	get := func() (response, error) {
		return harness.GatewayGet(harness.GatewayCall{Port: listenerPort, Host: host, Path: "/",
			Header: map[string][]string{"X-Echo-Close": {"1"}}})
	}
	g.await(t, "the ExternalName Service through CoreDNS", get, from(first))

	dns.SetRecords(t, harness.DNSRecords{hostname: {"127.0.0.2"}})
	dns.WaitAnswer(t, hostname, "127.0.0.2")
	changed := time.Now()
	var last response
	err := harness.Eventually(dnsFollowTimeout, 100*time.Millisecond, func() error {
		r, err := get()
		if err != nil {
			return err
		}
		last = r
		return from(second)(r)
	})
	if err != nil {
		t.Fatalf("after the DNS answer moved to 127.0.0.2: %v (last answer: %s)\n--- coredns log:\n%s", err, last, dns.LogTail(20))
	}
	t.Logf("new connections followed the DNS change in %s (CoreDNS answered the new address; Envoy's refresh rate bounds the rest)",
		time.Since(changed).Round(10*time.Millisecond))
	for i := range 5 {
		r, err := get()
		if err != nil {
			t.Fatalf("request %d after the switch: %v", i, err)
		}
		if err := from(second)(r); err != nil {
			t.Fatalf("request %d after the switch went back: %v", i, err)
		}
	}
	if c := second.counts(t); c.Requests == 0 {
		t.Errorf("backend %s on 127.0.0.2 counted no request", second.name)
	}
}
