package sidecar

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	originaldstv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/original_dst/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
)

var update = flag.Bool("update", false, "rewrite testdata/*.yaml")

var shopEcho = Options{Namespace: "shop", Pod: "echo-7d9f-x2", ServiceAccount: "echo", XDSAddress: "127.0.0.1:18000"}

func TestBootstrapRefusesBadOptions(t *testing.T) {
	with := func(edit func(*Options)) Options { o := shopEcho; edit(&o); return o }
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"no namespace", with(func(o *Options) { o.Namespace = "" }), "namespace \"\""},
		{"namespace with a slash", with(func(o *Options) { o.Namespace = "shop/x" }), "namespace \"shop/x\""},
		{"namespace with a dot", with(func(o *Options) { o.Namespace = "shop.x" }), "namespace \"shop.x\""},
		{"no pod", with(func(o *Options) { o.Pod = "" }), "pod \"\""},
		{"no service account", with(func(o *Options) { o.ServiceAccount = "" }), "service account \"\""},
		{"xDS address without a port", with(func(o *Options) { o.XDSAddress = "tlsplane" }), "xDS address \"tlsplane\""},
		{"xDS port out of range", with(func(o *Options) { o.XDSAddress = "tlsplane:70000" }), "port in 1-65535"},
		{"xDS address without a host", with(func(o *Options) { o.XDSAddress = ":18000" }), "xDS address \":18000\""},
		{"API type", with(func(o *Options) { o.APIType = "REST" }), "ADS API type \"REST\""},
		{"ports clash", with(func(o *Options) { o.AdminPort, o.CapturePort = 15001, 15001 }), "both 15001"},
		{"capture port out of range", with(func(o *Options) { o.CapturePort = 65536 }), "capture port 65536"},
		{"TLS without a key", with(func(o *Options) { o.XDSTLS = &XDSTLS{CertFile: "c", CAFile: "ca"} }), "needs a certificate, its key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Bootstrap(tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// The node names its fleet and itself; the capture listener restores the
// original destination, hands connections on by it, and sends the rest
// through the passthrough to an ORIGINAL_DST cluster.
func TestBootstrapCapturesAndPassesThrough(t *testing.T) {
	boot, err := Bootstrap(shopEcho)
	if err != nil {
		t.Fatal(err)
	}
	if n := boot.Node; n.Cluster != "Mesh/shop" || n.Id != "echo-7d9f-x2.shop" ||
		n.Metadata.Fields[MetadataServiceAccount].GetStringValue() != "echo" || n.Metadata.Fields[MetadataNamespace].GetStringValue() != "shop" {
		t.Errorf("node %v, want cluster Mesh/shop, id echo-7d9f-x2.shop, the ServiceAccount and namespace in metadata", n)
	}
	ls := boot.StaticResources.Listeners
	if len(ls) != 1 {
		t.Fatalf("%d static listeners, want the capture listener", len(ls))
	}
	l := ls[0]
	if a := l.Address.GetSocketAddress(); a.Address != "127.0.0.1" || a.GetPortValue() != DefaultCapturePort {
		t.Errorf("capture listener on %v, want 127.0.0.1:%d", a, DefaultCapturePort)
	}
	if !l.UseOriginalDst.GetValue() {
		t.Error("use_original_dst is not true: connections would not be handed to the xDS listeners")
	}
	if len(l.ListenerFilters) != 1 || !l.ListenerFilters[0].GetTypedConfig().MessageIs(&originaldstv3.OriginalDst{}) {
		t.Errorf("listener filters %v, want original_dst alone", l.ListenerFilters)
	}
	if len(l.FilterChains) != 1 || len(l.FilterChains[0].Filters) != 1 {
		t.Fatalf("filter chains %v, want one passthrough chain", l.FilterChains)
	}
	proxy := &tcpproxyv3.TcpProxy{}
	if err := l.FilterChains[0].Filters[0].GetTypedConfig().UnmarshalTo(proxy); err != nil || proxy.GetCluster() != PassthroughCluster {
		t.Errorf("passthrough chain %v (%v), want a TCP proxy to %s", proxy, err, PassthroughCluster)
	}
	clusters := map[string]*clusterv3.Cluster{}
	for _, c := range boot.StaticResources.Clusters {
		clusters[c.Name] = c
	}
	if c := clusters[PassthroughCluster]; c.GetType() != clusterv3.Cluster_ORIGINAL_DST || c.GetLbPolicy() != clusterv3.Cluster_CLUSTER_PROVIDED {
		t.Errorf("passthrough cluster %v, want ORIGINAL_DST with CLUSTER_PROVIDED", c)
	}
	if c := clusters[XDSCluster]; c.GetType() != clusterv3.Cluster_STATIC || c.TransportSocket != nil {
		t.Errorf("xDS cluster for an IP: %v, want STATIC and plaintext", c)
	}
	if boot.DynamicResources.LdsConfig.GetAds() == nil || boot.DynamicResources.CdsConfig.GetAds() == nil {
		t.Error("listeners and clusters do not come over ADS")
	}
}

// A name is resolved by DNS; mutual TLS presents the workload's
// certificate and requires tlsplane's to name the host.
func TestBootstrapXDSByNameWithMutualTLS(t *testing.T) {
	o := shopEcho
	o.XDSAddress = "tlsplane.tlsplane-system.svc:18000"
	o.XDSTLS = &XDSTLS{CertFile: "/tls/tls.crt", KeyFile: "/tls/tls.key", CAFile: "/tls/ca.crt"}
	boot, err := Bootstrap(o)
	if err != nil {
		t.Fatal(err)
	}
	xds := boot.StaticResources.Clusters[0]
	if xds.Name != XDSCluster || xds.GetType() != clusterv3.Cluster_LOGICAL_DNS {
		t.Fatalf("xDS cluster %v, want LOGICAL_DNS", xds)
	}
	tls := &tlsv3.UpstreamTlsContext{}
	if err := xds.TransportSocket.GetTypedConfig().UnmarshalTo(tls); err != nil {
		t.Fatal(err)
	}
	sans := tls.CommonTlsContext.GetValidationContext().GetMatchTypedSubjectAltNames()
	if tls.Sni != "tlsplane.tlsplane-system.svc" || len(sans) != 1 || sans[0].Matcher.GetExact() != "tlsplane.tlsplane-system.svc" ||
		tls.CommonTlsContext.TlsCertificates[0].CertificateChain.GetFilename() != "/tls/tls.crt" {
		t.Errorf("xDS TLS %v, want SNI and SAN tlsplane.tlsplane-system.svc and the workload certificate", tls)
	}
	if o.XDSTLS.ServerName != "" {
		t.Error("Bootstrap changed the caller's XDSTLS")
	}
}

// TestBootstrapGolden: the YAML `tlsplane sidecar-bootstrap` prints, byte
// for byte, and the same bytes every time.
func TestBootstrapGolden(t *testing.T) {
	got, err := YAML(shopEcho)
	if err != nil {
		t.Fatal(err)
	}
	again, err := YAML(shopEcho)
	if err != nil || !bytes.Equal(got, again) {
		t.Fatalf("two YAML runs differ (%v)", err)
	}
	path := filepath.Join("testdata", "bootstrap.yaml")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("YAML differs from %s (go test ./sidecar -run Golden -update):\n%s", path, got)
	}
}
