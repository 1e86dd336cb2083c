// Package xbackend owns every XBackend rule (GEP-4894): an XBackend's
// verdict (its type, hostname, port, protocol, TLS mode and the
// tlsplane.io/ options of its annotations), the plan of its clusters
// (one per route family it can serve: HTTP, gRPC, raw streams) with
// their TLS, the CA bundle and client certificate it reads, and its
// conditions and status.parents.
//
// It judges; it never builds Envoy protos (no translator/envoy), and
// knows no Gateway or route (no translator/gateway, translator/route): the
// engine records its verdicts in the index, where routes read them. CA
// references, trust and client certificates are resolved by
// translator/backendtls, the one place those rules live.
package xbackend
