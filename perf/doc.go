// Package perf measures tlsplane at the scale its targets name (issues 6,
// 15 and 23): re-translation and snapshot building among 10,000 and
// 100,000 Services, and ADS fan-out over real gRPC on loopback, to 1,000
// streams of one kind and to 5,000 delta and 5,000 state-of-the-world
// streams at once. It holds benchmarks and their input generators only;
// nothing in the product imports it, and `make bench` runs it, not
// `make test`. cmd/perfreport and cmd/perfplot render what `make bench`
// measured into docs/performance.md and docs/performance.png.
//
// Performance code has two homes because it lives in two modules: this
// one, in process, in the main module (beside the packages it measures,
// and in `make test-unit` for its own tests), and e2e/perf, which needs
// real processes and the e2e module's fixtures (e2e/harness,
// e2e/apiserver) that the main module does not depend on. Nothing else
// measures performance.
package perf
