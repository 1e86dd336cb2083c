// Package route owns the judging of every route kind: HTTPRoute and
// GRPCRoute rules (matches, filters, CORS, retries, timeouts, mirrors,
// backends, precedence) and the backends of TLSRoutes, TCPRoutes and
// UDPRoutes. Each Judge function turns one route object into a Route: its
// ranked route plans or stream backends, the Service ports and clusters
// it reaches, and its resolved and unsupported verdicts; Status
// renders its status from the verdict of each parent. It knows nothing of
// Gateways or listeners: package gateway attaches Routes, settles their
// conflicts and gives each parent's verdict. It must not import the
// gateway package, the emitter (translator/envoy), the engine
// (translator), the other judges (translator/backendtls,
// translator/upstream) or go-control-plane.
package route
