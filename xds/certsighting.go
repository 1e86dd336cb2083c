package xds

import (
	"crypto/x509"
	"time"
)

// CertificateSighting is one upstream TLS connection's outcome as an
// Envoy's access log service reported it: which certificate the backend
// presented and what was negotiated. Only clusters the reporting fleet is
// served are reported; entries without a peer certificate are dropped.
type CertificateSighting struct {
	NodeID, Fleet string
	// Cluster is the Envoy cluster the request went to; UpstreamHost the
	// address Envoy connected to ("10.0.0.7:8443").
	Cluster, UpstreamHost string
	// Leaf is the backend's certificate, parsed (subject, SANs, issuer,
	// serial, NotAfter).
	Leaf *x509.Certificate
	// Version and Cipher as Envoy names them: "TLSv1.3",
	// "TLS_AES_128_GCM_SHA256".
	Version, Cipher string
	// Seen is when Envoy logged the request (its start time).
	Seen time.Time
}
