package xds

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"net/url"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	accesslogdatav3 "github.com/envoyproxy/go-control-plane/envoy/data/accesslog/v3"
	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/service/accesslog/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// envoyEncoded is a PEM as Envoy's %UPSTREAM_PEER_CERT% writes it:
// URL-encoded, spaces as %20 (never '+', which base64 holds).
func envoyEncoded(pemText string) string { return url.PathEscape(pemText) }

// testLeaf is a real certificate, PEM and parsed.
func testLeaf(t *testing.T) (string, *x509.Certificate) {
	t.Helper()
	certPEM, _ := newTestCA(t).issue(t, leafSpec{dns: "payments.shop", server: true})
	block, _ := pem.Decode(certPEM)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return string(certPEM), leaf
}

// logCommon is an entry's common properties as the certificate log sends
// them.
func logCommon(cluster, host string, port uint32, tags map[string]string) *accesslogdatav3.AccessLogCommon {
	c := &accesslogdatav3.AccessLogCommon{
		UpstreamCluster: cluster, CustomTags: tags,
		StartTime: timestamppb.New(time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)),
	}
	if host != "" {
		c.UpstreamRemoteAddress = &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
			Address: host, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
		}}}
	}
	return c
}

func certTags(encoded string) map[string]string {
	return map[string]string{plan.CertificateTag: encoded, plan.TLSVersionTag: "TLSv1.3", plan.TLSCipherTag: "TLS_AES_128_GCM_SHA256"}
}

func TestParseSighting(t *testing.T) {
	certPEM, leaf := testLeaf(t)
	good := certTags(envoyEncoded(certPEM))
	withTag := func(k, v string) map[string]string {
		m := certTags(envoyEncoded(certPEM))
		m[k] = v
		return m
	}
	tests := []struct {
		name   string
		entry  entry
		reason string
	}{
		{"HTTP entry", &accesslogdatav3.HTTPAccessLogEntry{CommonProperties: logCommon("shop/payments/8443", "10.0.0.7", 8443, good)}, ""},
		{"TCP entry", &accesslogdatav3.TCPAccessLogEntry{CommonProperties: logCommon("shop/payments/8443", "10.0.0.7", 8443, good)}, ""},
		{"plaintext upstream", &accesslogdatav3.HTTPAccessLogEntry{CommonProperties: logCommon("shop/payments/8443", "10.0.0.7", 8443, withTag(plan.CertificateTag, ""))}, DroppedNoCertificate},
		{"certificate over its bound", &accesslogdatav3.HTTPAccessLogEntry{CommonProperties: logCommon("shop/payments/8443", "10.0.0.7", 8443,
			withTag(plan.CertificateTag, strings.Repeat("A", MaxSightedCertificateBytes+1)))}, DroppedOversize},
		{"entry over its bound", &accesslogdatav3.HTTPAccessLogEntry{CommonProperties: logCommon("shop/payments/8443", "10.0.0.7", 8443,
			withTag("other", strings.Repeat("x", MaxSightingEntryBytes)))}, DroppedOversize},
		{"not a certificate", &accesslogdatav3.HTTPAccessLogEntry{CommonProperties: logCommon("shop/payments/8443", "10.0.0.7", 8443,
			withTag(plan.CertificateTag, envoyEncoded("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n")))}, DroppedUnparsable},
		{"bad escape", &accesslogdatav3.HTTPAccessLogEntry{CommonProperties: logCommon("shop/payments/8443", "10.0.0.7", 8443, withTag(plan.CertificateTag, "%zz"))}, DroppedUnparsable},
		{"no upstream address", &accesslogdatav3.HTTPAccessLogEntry{CommonProperties: logCommon("shop/payments/8443", "", 0, good)}, DroppedUnparsable},
		{"no cluster", &accesslogdatav3.TCPAccessLogEntry{CommonProperties: logCommon("", "10.0.0.7", 8443, good)}, DroppedUnparsable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, reason := parseSighting(tc.entry)
			if reason != tc.reason {
				t.Fatalf("reason %q, want %q", reason, tc.reason)
			}
			if reason != "" {
				return
			}
			if s.Cluster != "shop/payments/8443" || s.UpstreamHost != "10.0.0.7:8443" || s.Version != "TLSv1.3" || s.Cipher != "TLS_AES_128_GCM_SHA256" ||
				!s.Leaf.Equal(leaf) || !s.Seen.Equal(time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)) {
				t.Errorf("sighting %+v", s)
			}
		})
	}
	// An IPv6 upstream is bracketed, as a host:port.
	s, _ := parseSighting(&accesslogdatav3.HTTPAccessLogEntry{CommonProperties: logCommon("c", "::1", 443, good)})
	if s.UpstreamHost != "[::1]:443" {
		t.Errorf("IPv6 upstream host = %q", s.UpstreamHost)
	}
}

// sendLogs streams msgs on an access log stream and returns its final
// status.
func sendLogs(t *testing.T, conn *grpc.ClientConn, msgs ...*accesslogv3.StreamAccessLogsMessage) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	stream, err := accesslogv3.NewAccessLogServiceClient(conn).StreamAccessLogs(ctx)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := stream.Send(m); err != nil {
			break // the server's status comes with CloseAndRecv
		}
	}
	_, err = stream.CloseAndRecv()
	return err
}

func httpLogs(entries ...*accesslogdatav3.HTTPAccessLogEntry) *accesslogv3.StreamAccessLogsMessage {
	return &accesslogv3.StreamAccessLogsMessage{LogEntries: &accesslogv3.StreamAccessLogsMessage_HttpLogs{
		HttpLogs: &accesslogv3.StreamAccessLogsMessage_HTTPAccessLogEntries{LogEntry: entries}}}
}

func TestAccessLogServiceHandsOnOnlyServedClustersOfAnAuthorizedFleet(t *testing.T) {
	sightings := make(chan CertificateSighting, 8)
	s := startSecureWith(t, DefaultFleetIdentity,
		snapshots.Options{FleetNamespaces: map[string][]string{"edge": {"shop"}}},
		Options{OnCertificateSighting: func(c CertificateSighting) { sightings <- c }})
	s.publish(t, st.Output(payments, ledger), true)
	edgeCert, edgeKey := s.ca.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/edge"})
	otherCert, otherKey := s.ca.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/internal"})
	certPEM, leaf := testLeaf(t)
	tags := certTags(envoyEncoded(certPEM))

	first := httpLogs(
		&accesslogdatav3.HTTPAccessLogEntry{CommonProperties: logCommon(payments.ClusterName(), "10.0.0.7", 8443, tags)},
		// bank is not served to edge: edge may not speak for it.
		&accesslogdatav3.HTTPAccessLogEntry{CommonProperties: logCommon(ledger.ClusterName(), "10.0.0.9", 443, tags)},
	)
	first.Identifier = &accesslogv3.StreamAccessLogsMessage_Identifier{Node: &corev3.Node{Id: "envoy-1", Cluster: "edge"}, LogName: plan.CertificateLogName}
	// Envoy names the node in the first message only.
	second := &accesslogv3.StreamAccessLogsMessage{LogEntries: &accesslogv3.StreamAccessLogsMessage_TcpLogs{
		TcpLogs: &accesslogv3.StreamAccessLogsMessage_TCPAccessLogEntries{LogEntry: []*accesslogdatav3.TCPAccessLogEntry{
			{CommonProperties: logCommon(payments.ClusterName(), "10.0.0.8", 8443, tags)},
		}}}}
	if err := sendLogs(t, s.dial(t, edgeCert, edgeKey, nil), first, second); err != nil {
		t.Fatalf("edge's stream: %v", err)
	}
	for i, host := range []string{"10.0.0.7:8443", "10.0.0.8:8443"} {
		select {
		case got := <-sightings:
			if got.Fleet != "edge" || got.NodeID != "envoy-1" || got.Cluster != payments.ClusterName() || got.UpstreamHost != host || !got.Leaf.Equal(leaf) {
				t.Fatalf("sighting %d = %+v, want fleet edge, node envoy-1, %s at %s", i, got, payments.ClusterName(), host)
			}
		case <-time.After(patience):
			t.Fatalf("sighting %d never came", i)
		}
	}
	if n := counterValue(t, s.metrics.sightingsDropped.WithLabelValues(DroppedNotServed)); n != 1 {
		t.Fatalf("dropped as not served = %v, want 1 (bank/ledger/443)", n)
	}
	if n := counterValue(t, s.metrics.sightings); n != 2 {
		t.Fatalf("sightings = %v, want 2", n)
	}

	// Another log sent to this service is not read as certificates.
	other := httpLogs(&accesslogdatav3.HTTPAccessLogEntry{CommonProperties: logCommon(payments.ClusterName(), "10.0.0.7", 8443, tags)})
	other.Identifier = &accesslogv3.StreamAccessLogsMessage_Identifier{Node: &corev3.Node{Id: "envoy-1", Cluster: "edge"}, LogName: "operator-log"}
	if err := sendLogs(t, s.dial(t, edgeCert, edgeKey, nil), other); err != nil {
		t.Fatalf("edge's other log: %v", err)
	}
	if n := counterValue(t, s.metrics.sightingsDropped.WithLabelValues(DroppedOtherLog)); n != 1 {
		t.Fatalf("dropped as another log = %v, want 1", n)
	}

	// A certificate of fleet internal may not report as edge.
	if err := sendLogs(t, s.dial(t, otherCert, otherKey, nil), first); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("internal's certificate reporting as edge: %v, want PermissionDenied", err)
	}
	// Nor may a stream switch fleets after it was authorized.
	switched := httpLogs()
	switched.Identifier = &accesslogv3.StreamAccessLogsMessage_Identifier{Node: &corev3.Node{Id: "envoy-1", Cluster: "internal"}, LogName: plan.CertificateLogName}
	if err := sendLogs(t, s.dial(t, edgeCert, edgeKey, nil), first, switched); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a stream switching fleets: %v, want PermissionDenied", err)
	}
	// A stream that never names its node is refused.
	if err := sendLogs(t, s.dial(t, edgeCert, edgeKey, nil), second); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a stream without a node: %v, want InvalidArgument", err)
	}
	// The refused streams' entries were never handed on: only the switched
	// stream's first message, authorized as edge, was.
	select {
	case got := <-sightings:
		if got.Fleet != "edge" {
			t.Fatalf("a refused stream reported %+v", got)
		}
	case <-time.After(quiet):
	}
}
