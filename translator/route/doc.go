// Package route owns the judging of every route kind: HTTPRoute and
// GRPCRoute rules (matches, filters, CORS, retries, timeouts, mirrors,
// backends, precedence) and the backends of TLSRoutes, TCPRoutes and
// UDPRoutes. Each Judge function turns one route object into a Route: its
// ranked route plans or stream backends, the Service ports it reaches, and
// its resolved and unsupported verdicts. It knows nothing of Gateways or
// listeners: the gateway package attaches Routes, settles their conflicts
// and writes their statuses. It must not import the gateway package, the
// emitter (translator/envoy), the engine (translator) or go-control-plane.
package route
