package faults

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// Real Envoys against tlsplane with mutual TLS, bootstrapped as
// docs/security.md shows: the fleet's certificate is served; a certificate
// of another fleet, no certificate, and plaintext get no configuration.
// SotW and delta ADS alike.
func TestMutualTLSWithEnvoy(t *testing.T) {
	for _, apiType := range []string{"GRPC", "DELTA_GRPC"} {
		t.Run(apiType, func(t *testing.T) { mutualTLSWithEnvoy(t, apiType) })
	}
}

func mutualTLSWithEnvoy(t *testing.T, apiType string) {
	e := newEnv(t, "")
	e.apiType = apiType
	x := newXDSPKI(t, e.root)
	serverCert, serverKey := x.issue(t, "tlsplane-xds", true, "")
	fleetCert, fleetKey := x.issue(t, "envoy-faults", false, "spiffe://cluster.local/fleet/faults")
	otherCert, otherKey := x.issue(t, "envoy-other", false, "spiffe://cluster.local/fleet/other")
	e.tlsplaneArgs = []string{"--xds-tls-cert", serverCert, "--xds-tls-key", serverKey, "--xds-client-ca", x.caFile}

	port := e.startBackend(t, "mtls")
	harness.WriteAtomic(t, filepath.Join(e.manifestDir, "mtls.yaml"), manifest(t, backendObjects("mtls", port, e.pki.caPEM, hostMain)))
	e.startTLSPlane(t)
	e.envoy = e.startEnvoyWith(t, envoyOpts{
		name: "envoy", fleet: "faults", waitReady: true,
		xdsTLS: &harness.XDSTLS{CertFile: fleetCert, KeyFile: fleetKey, CAFile: x.caFile, ServerName: xdsServerName},
	})
	e.waitServed(t, clusterName("mtls"), "mtls", hostMain)

	refusedBefore := e.metric(t, "tlsplane_xds_streams_refused_total")
	type outsider struct {
		name      string
		envoy     *harness.Envoy
		refusedBy string // what refuses it, for messages
	}
	var outsiders []outsider
	for _, o := range []struct {
		opts      envoyOpts
		refusedBy string
	}{
		{envoyOpts{name: "other-fleet", fleet: "faults", xdsTLS: &harness.XDSTLS{CertFile: otherCert, KeyFile: otherKey, CAFile: x.caFile, ServerName: xdsServerName}}, "PermissionDenied"},
		{envoyOpts{name: "no-cert", fleet: "faults", xdsTLS: &harness.XDSTLS{CAFile: x.caFile, ServerName: xdsServerName}}, "the TLS handshake"},
		{envoyOpts{name: "plaintext", fleet: "faults"}, "the TLS handshake"},
	} {
		outsiders = append(outsiders, outsider{o.opts.name, e.startEnvoyWith(t, o.opts), o.refusedBy})
	}
	err := harness.Eventually(applyTimeout, 200*time.Millisecond, func() error {
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
		err := harness.Eventually(10*time.Second, 200*time.Millisecond, func() error {
			var err error
			if stats, err = o.envoy.Stats(); err != nil {
				return err
			}
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
