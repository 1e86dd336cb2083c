package snapshots

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

func TestDebugSnapshotIsAConfigDump(t *testing.T) {
	p := New(Options{FleetNamespaces: map[string][]string{"bank-edge": {"bank"}}})
	if _, err := p.DebugSnapshot("x"); !errors.Is(err, ErrNotReady) {
		t.Fatalf("before publish: %v", err)
	}
	p.NodeStreamOpened(&corev3.Node{Id: "envoy-7", Cluster: "bank-edge"})
	if _, err := p.Publish(st.Output(payments, ledger)); err != nil {
		t.Fatal(err)
	}
	byNode, err := p.DebugSnapshot("envoy-7")
	if err != nil {
		t.Fatal(err)
	}
	var dump struct {
		Configs []map[string]any `json:"configs"`
	}
	if err := json.Unmarshal(byNode, &dump); err != nil {
		t.Fatal(err)
	}
	wantTypes := []string{"ClustersConfigDump", "EndpointsConfigDump", "ListenersConfigDump", "RoutesConfigDump", "SecretsConfigDump"}
	if len(dump.Configs) != len(wantTypes) {
		t.Fatalf("configs: %d", len(dump.Configs))
	}
	for i, c := range dump.Configs {
		if !strings.HasSuffix(c["@type"].(string), wantTypes[i]) {
			t.Errorf("config %d is %v", i, c["@type"])
		}
	}
	if strings.Contains(string(byNode), "shop/payments") || !strings.Contains(string(byNode), "bank/ledger/443") {
		t.Errorf("node of fleet bank-edge sees:\n%s", byNode)
	}
	byFleet, err := p.DebugSnapshot("bank-edge")
	if err != nil || string(byFleet) != string(byNode) {
		t.Fatalf("by fleet differs from by node (err %v)", err)
	}
	all, err := p.DebugSnapshot("fleet-not-connected")
	if err != nil || !strings.Contains(string(all), "shop/payments/8443") {
		t.Fatalf("unconnected fleet: err %v", err)
	}
}
