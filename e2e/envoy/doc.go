// Package envoy is the end-to-end proof of the file mode: a real Envoy 1.40
// carries requests over the upstream TLS that `tlsplane serve --dir`
// configured, to real HTTPS echo backends (examples/backend), and refuses the
// requests it must refuse. TestGateway does the same for a Gateway: an Envoy
// of fleet <namespace>/<gateway> with no listener of its own gets the
// Gateway's listeners, routes and certificates over ADS and routes by host,
// path, weight and SNI. TestDNSChangeFollowed resolves a DNS cluster
// through a real CoreDNS the test controls; TestHTTPRouteRetry proves the
// retry features the conformance suite has no test for. It starts every
// process itself (tlsplane, Envoy,
// the echo backends; the binaries as e2e/harness finds them).
package envoy
