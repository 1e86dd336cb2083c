// Package routesplit measures how long a real Envoy takes to apply one
// edited HTTP route among N hostnames behind one plain-HTTP listener, for
// each way of splitting the route table: one RouteConfiguration of N
// virtual hosts (what tlsplane sends today), VHDS (virtual hosts as their
// own delta resources), and scoped RDS (a scope per hostname, keyed on the
// Host header, each with its own RouteConfiguration).
//
// It is a measurement, not a test of tlsplane: its delta ADS server is a
// small one of its own (the e2e module does not carry go-control-plane's
// cache and server), serving hand-built resources on 127.0.0.1:0. It is
// skipped unless -routesplit is given:
//
//	go test ./perf/routesplit -run . -v -count=1 -timeout 30m -args -routesplit
package routesplit
