// Package perf measures tlsplane at the scale its targets name (issue 6):
// re-translation and snapshot building among 10,000 Services, and ADS
// fan-out to 1,000 streams over real gRPC on loopback. It holds benchmarks
// and their input generators only; nothing in the product imports it, and
// `make bench` runs it, not `make test`.
package perf
