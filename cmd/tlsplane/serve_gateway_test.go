package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	sotw "github.com/envoyproxy/go-control-plane/pkg/client/sotw/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// copyGatewayExample copies examples/gateway's manifests into a directory
// of their own.
func copyGatewayExample(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files, _ := filepath.Glob("../../examples/gateway/*.yaml")
	if len(files) < 5 {
		t.Fatalf("gateway example manifests: %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, filepath.Base(f)), string(data))
	}
	return dir
}

// TestServeGatewayListenersOnTheListenerAddress: `serve --dir
// examples/gateway --listener-address 127.0.0.2` gives an Envoy of fleet
// shop/edge the Gateway's two listeners, bound to that address, over ADS.
func TestServeGatewayListenersOnTheListenerAddress(t *testing.T) {
	p := startServe(t, copyGatewayExample(t), "--listener-address", "127.0.0.2")
	p.waitAdmin(t, "/readyz", 200, "ready")

	conn, ctx := xdsConn(t, p.xds)
	c := sotw.NewADSClient(ctx, &corev3.Node{Id: "edge-1", Cluster: "shop/edge"}, resource.ListenerType)
	if err := c.InitConnect(conn); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Fetch()
	if err != nil {
		t.Fatalf("LDS fetch: %v", err)
	}
	var names []string
	for _, a := range resp.Resources {
		l := &listenerv3.Listener{}
		if err := a.UnmarshalTo(l); err != nil {
			t.Fatal(err)
		}
		names = append(names, l.GetName())
		if got := l.GetAddress().GetSocketAddress().GetAddress(); got != "127.0.0.2" {
			t.Errorf("listener %s binds %q, want 127.0.0.2 (--listener-address)", l.GetName(), got)
		}
	}
	slices.Sort(names)
	if want := []string{"shop/edge/10080", "shop/edge/10443"}; !slices.Equal(names, want) {
		t.Fatalf("LDS for fleet shop/edge = %v, want %v", names, want)
	}
	p.waitAdmin(t, "/debug/status", 200, `"Programmed"`)
}
