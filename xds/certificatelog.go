package xds

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"net/url"
	"strconv"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	accesslogdatav3 "github.com/envoyproxy/go-control-plane/envoy/data/accesslog/v3"
	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/service/accesslog/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// Bounds of one certificate log entry: a leaf certificate is a few KiB,
// so anything larger is not what the translator's log sends.
const (
	// MaxSightingEntryBytes bounds an access log entry, encoded.
	MaxSightingEntryBytes = 32 << 10
	// MaxSightedCertificateBytes bounds the peer certificate tag, as
	// Envoy sends it (URL-encoded PEM).
	MaxSightedCertificateBytes = 16 << 10
)

// The reasons an access log entry is dropped, the reason label of
// tlsplane_xds_certificate_sightings_dropped_total.
const (
	// DroppedOtherLog: the entry is of another log than the translator's
	// certificate log (plan.CertificateLogName).
	DroppedOtherLog = "other_log"
	// DroppedOversize: the entry or its certificate is over its bound.
	DroppedOversize = "oversize"
	// DroppedNoCertificate: the upstream connection presented none (not
	// TLS, or the handshake failed).
	DroppedNoCertificate = "no_certificate"
	// DroppedUnparsable: the certificate, or the upstream address or
	// cluster, cannot be read.
	DroppedUnparsable = "unparsable"
	// DroppedNotServed: the entry names a cluster the reporting fleet is
	// not served.
	DroppedNotServed = "not_served"
)

// entry is what an HTTP and a TCP access log entry share.
type entry interface {
	proto.Message
	GetCommonProperties() *accesslogdatav3.AccessLogCommon
}

// entriesOf are a message's HTTP or TCP entries.
func entriesOf(msg *accesslogv3.StreamAccessLogsMessage) []entry {
	var out []entry
	for _, e := range msg.GetHttpLogs().GetLogEntry() {
		out = append(out, e)
	}
	for _, e := range msg.GetTcpLogs().GetLogEntry() {
		out = append(out, e)
	}
	return out
}

// parseSighting reads one certificate log entry, or says why it is
// dropped. NodeID and Fleet are the caller's to fill.
func parseSighting(e entry) (CertificateSighting, string) {
	if proto.Size(e) > MaxSightingEntryBytes {
		return CertificateSighting{}, DroppedOversize
	}
	common := e.GetCommonProperties()
	tags := common.GetCustomTags()
	encoded := tags[plan.CertificateTag]
	if encoded == "" {
		return CertificateSighting{}, DroppedNoCertificate
	}
	if len(encoded) > MaxSightedCertificateBytes {
		return CertificateSighting{}, DroppedOversize
	}
	leaf, ok := parseLeaf(encoded)
	host := socketAddress(common.GetUpstreamRemoteAddress())
	cluster := common.GetUpstreamCluster()
	if !ok || host == "" || cluster == "" {
		return CertificateSighting{}, DroppedUnparsable
	}
	s := CertificateSighting{
		Cluster: cluster, UpstreamHost: host, Leaf: leaf,
		Version: tags[plan.TLSVersionTag], Cipher: tags[plan.TLSCipherTag],
	}
	if t := common.GetStartTime(); t != nil {
		s.Seen = t.AsTime()
	}
	return s, ""
}

// parseLeaf reads Envoy's %UPSTREAM_PEER_CERT%: the leaf's PEM,
// URL-encoded ('+' is base64's, never a space: path unescaping).
func parseLeaf(encoded string) (*x509.Certificate, bool) {
	decoded, err := url.PathUnescape(encoded)
	if err != nil {
		return nil, false
	}
	block, _ := pem.Decode([]byte(decoded))
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, false
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, false
	}
	return leaf, true
}

// socketAddress is an upstream's "ip:port", "" when not an IP socket.
func socketAddress(a *corev3.Address) string {
	sa := a.GetSocketAddress()
	if sa == nil || sa.GetAddress() == "" {
		return ""
	}
	return net.JoinHostPort(sa.GetAddress(), strconv.FormatUint(uint64(sa.GetPortValue()), 10))
}
