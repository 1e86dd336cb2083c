package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	sotw "github.com/envoyproxy/go-control-plane/pkg/client/sotw/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// TestServeShowsClustersWithheldFromAFleetWithoutAGrant: a fleet without
// a Gateway and without a --fleet-namespaces grant is not served the
// cluster presenting a policy's client certificate, and the operator can
// see which: /debug/status lists it and the gauge counts it. With
// --fleet-scope=all nothing is withheld.
func TestServeShowsClustersWithheldFromAFleetWithoutAGrant(t *testing.T) {
	const mtls = "shop/mtls/443" // presents Secret shop/envoy-client
	in, err := os.ReadFile(filepath.Join("..", "..", "testdata", "translator", "client-certificate.in.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "world.yaml"), in, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flags    []string
		withheld []string
	}{
		{nil, []string{mtls}},
		{[]string{"--fleet-scope=all"}, []string{}},
	} {
		p := startServe(t, dir, c.flags...)
		p.waitAdmin(t, "/readyz", 200, "ready")
		served := fleetClusters(t, p.xds, "mesh")
		if got := slices.Contains(served, mtls); got == (len(c.withheld) > 0) {
			t.Errorf("%v: fleet mesh served %s: %v (clusters %v)", c.flags, mtls, got, served)
		}
		var debug struct {
			WithheldClusters []string `json:"withheldClusters"`
		}
		if err := json.Unmarshal([]byte(p.waitAdmin(t, "/debug/status", 200, "withheldClusters")), &debug); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(debug.WithheldClusters, c.withheld) {
			t.Errorf("%v: /debug/status withheldClusters = %v, want %v", c.flags, debug.WithheldClusters, c.withheld)
		}
		p.waitAdmin(t, "/metrics", 200, "tlsplane_snapshot_withheld_clusters "+strconv.Itoa(len(c.withheld)))
	}
}

// fleetClusters fetches the clusters an Envoy of fleet gets, sorted; the
// stream stays open while the test runs, so the fleet counts as connected.
func fleetClusters(t *testing.T, addr, fleet string) []string {
	t.Helper()
	conn, ctx := xdsConn(t, addr)
	c := sotw.NewADSClient(ctx, &corev3.Node{Id: fleet + "-1", Cluster: fleet}, resource.ClusterType)
	if err := c.InitConnect(conn); err != nil {
		t.Fatal(err)
	}
	return fetchClusters(t, c)
}
