package main

import (
	"time"

	"github.com/tlsplane/tlsplane/backendcerts"
	"github.com/tlsplane/tlsplane/handshakes"
	"github.com/tlsplane/tlsplane/xds"
)

// sharing is what replicas share in Kubernetes mode: the handshake
// windows and the backend certificate inventory (package peers).
type sharing struct {
	tracker   *handshakes.Tracker
	inventory *backendcerts.Inventory
}

// certificateSighting is the xDS server's report as the inventory keeps
// it; ok=false without a certificate (the service drops those already).
func certificateSighting(s xds.CertificateSighting) (backendcerts.Sighting, bool) {
	if s.Leaf == nil {
		return backendcerts.Sighting{}, false
	}
	return backendcerts.Sighting{Node: s.NodeID, Fleet: s.Fleet, Cluster: s.Cluster, Host: s.UpstreamHost,
		Certificate: backendcerts.CertificateOf(s.Leaf), Version: s.Version, Cipher: s.Cipher}, true
}

// certExpiryWarning is --backend-certificate-expiry-warning for the
// inventory: 0 never warns (the inventory's negative).
func certExpiryWarning(flag time.Duration) time.Duration {
	if flag <= 0 {
		return -1
	}
	return flag
}
