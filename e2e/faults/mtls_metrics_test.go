package faults

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// TestMetricsServiceWithMutualTLS: a real Envoy's stat sink reaches
// tlsplane's metrics service through the same mutual TLS as its ADS
// stream, and an Envoy whose certificate is another fleet's is refused
// there too.
func TestMetricsServiceWithMutualTLS(t *testing.T) {
	e := newEnv(t, "")
	e.apiType = "GRPC"
	x := newXDSPKI(t, e.root)
	serverCert, serverKey := x.issue(t, "tlsplane-xds", true, "")
	fleetCert, fleetKey := x.issue(t, "envoy-faults", false, "spiffe://cluster.local/fleet/faults")
	otherCert, otherKey := x.issue(t, "envoy-other", false, "spiffe://cluster.local/fleet/other")
	e.tlsplaneArgs = []string{"--xds-tls-cert", serverCert, "--xds-tls-key", serverKey, "--xds-client-ca", x.caFile}

	port := e.startBackend(t, "stats")
	harness.WriteAtomic(t, filepath.Join(e.manifestDir, "stats.yaml"), manifest(t, backendObjects("stats", port, e.pki.caPEM, hostMain)))
	e.startTLSPlane(t)
	e.envoy = e.startEnvoyWith(t, envoyOpts{
		name: "envoy", fleet: "faults", waitReady: true, statsFlush: time.Second,
		xdsTLS: &harness.XDSTLS{CertFile: fleetCert, KeyFile: fleetKey, CAFile: x.caFile, ServerName: xdsServerName},
	})
	e.waitServed(t, clusterName("stats"), "stats", hostMain)
	if got, err := e.request(clusterName("stats")); err != nil || got.SNI != hostMain {
		t.Fatalf("the fleet's Envoy: %+v, %v", got, err)
	}
	// The cluster's counters are reported, over mutual TLS, as the fleet's
	// (the handshakes so far are the Envoy's baseline: no condition yet).
	err := harness.Eventually(10*time.Second, 200*time.Millisecond, func() error {
		body, err := harness.HTTPGet(e.tlsplaneURL("/debug/status"))
		if err != nil {
			return err
		}
		if !strings.Contains(string(body), `"fleet": "faults",
      "cluster": "`+clusterName("stats")+`"`) {
			return errString("no handshake window of fleet faults on /debug/status yet")
		}
		return nil
	})
	if err != nil {
		body, _ := harness.HTTPGet(e.tlsplaneURL("/debug/status"))
		stats, _ := e.envoy.Stats()
		t.Fatalf("%v (reports %v; Envoy's stats %v)\n--- /debug/status:\n%s", err, e.metric(t, "tlsplane_xds_stats_reports_total"), stats, body)
	}
	reports := e.metric(t, "tlsplane_xds_stats_reports_total")

	// Another fleet's certificate naming fleet faults: its metrics stream
	// is refused, as its ADS stream is.
	e.startEnvoyWith(t, envoyOpts{
		name: "other-fleet", fleet: "faults", statsFlush: time.Second,
		xdsTLS: &harness.XDSTLS{CertFile: otherCert, KeyFile: otherKey, CAFile: x.caFile, ServerName: xdsServerName},
	})
	err = harness.Eventually(10*time.Second, 200*time.Millisecond, func() error {
		if !strings.Contains(e.tlsplane.Log(), "metrics stream refused") {
			return errString("no metrics stream refused yet")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reports from the fleet's Envoy before the outsider: %v; after: %v", reports, e.metric(t, "tlsplane_xds_stats_reports_total"))
}
