package faults

import (
	"path/filepath"
	"testing"
	"time"
)

// Real Envoys against tlsplane with mutual TLS, bootstrapped as
// docs/security.md shows: the fleet's certificate is served; a certificate
// of another fleet, no certificate, and plaintext get no configuration.
func TestMutualTLSWithEnvoy(t *testing.T) {
	e := newEnv(t, "")
	x := newXDSPKI(t, e.root)
	serverCert, serverKey := x.issue(t, "tlsplane-xds", 10, true, "")
	fleetCert, fleetKey := x.issue(t, "envoy-faults", 11, false, "spiffe://cluster.local/fleet/faults")
	otherCert, otherKey := x.issue(t, "envoy-other", 12, false, "spiffe://cluster.local/fleet/other")
	e.tlsplaneArgs = []string{"--xds-tls-cert", serverCert, "--xds-tls-key", serverKey, "--xds-client-ca", x.caFile}

	port := e.startBackend(t, "mtls")
	writeAtomic(t, filepath.Join(e.manifestDir, "mtls.yaml"), manifest(t, backendObjects("mtls", port, e.pki.caPEM, hostMain)))
	e.startTLSPlane(t)
	e.envoy, e.envoyAdminPort, e.envoyListenPort = e.startEnvoyWith(t, envoyOpts{
		name: "envoy", fleet: "faults", waitReady: true,
		xdsTLS: &envoyXDSTLS{certFile: fleetCert, keyFile: fleetKey, caFile: x.caFile},
	})
	e.waitServed(t, clusterName("mtls"), "mtls", hostMain)

	refusedBefore := e.metric(t, "tlsplane_xds_streams_refused_total")
	type outsider struct {
		name      string
		admin     int
		refusedBy string // what refuses it, for messages
	}
	var outsiders []outsider
	for _, o := range []struct {
		opts      envoyOpts
		refusedBy string
	}{
		{envoyOpts{name: "other-fleet", fleet: "faults", xdsTLS: &envoyXDSTLS{certFile: otherCert, keyFile: otherKey, caFile: x.caFile}}, "PermissionDenied"},
		{envoyOpts{name: "no-cert", fleet: "faults", xdsTLS: &envoyXDSTLS{caFile: x.caFile}}, "the TLS handshake"},
		{envoyOpts{name: "plaintext", fleet: "faults"}, "the TLS handshake"},
	} {
		_, admin, _ := e.startEnvoyWith(t, o.opts)
		outsiders = append(outsiders, outsider{o.opts.name, admin, o.refusedBy})
	}
	err := eventually(applyTimeout, 200*time.Millisecond, func() error {
		if e.metric(t, "tlsplane_xds_streams_refused_total") <= refusedBefore {
			return errString("the other fleet's Envoy was not refused yet")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // several reconnection attempts each
	for _, o := range outsiders {
		var stats map[string]int64
		err := eventually(10*time.Second, 200*time.Millisecond, func() error {
			stats = envoyStatsAt(t, o.admin)
			if _, ok := stats["cluster_manager.cds.update_attempt"]; !ok {
				return errString("no CDS stats yet")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", o.name, err)
		}
		if n := stats["cluster_manager.cds.update_success"]; n != 0 {
			t.Errorf("%s (refused by %s) applied %d CDS updates", o.name, o.refusedBy, n)
		}
		if n := stats["cluster_manager.active_clusters"] + stats["cluster_manager.warming_clusters"]; n != 1 {
			t.Errorf("%s (refused by %s) holds %d clusters, want only the static xDS cluster", o.name, o.refusedBy, n)
		}
	}
	// The fleet's own Envoy is still served.
	if got, err := e.request(clusterName("mtls")); err != nil || got.SNI != hostMain {
		t.Errorf("the fleet's Envoy: %+v, %v", got, err)
	}
	t.Logf("streams refused: %v", e.metric(t, "tlsplane_xds_streams_refused_total")-refusedBefore)
}
