// Package gateway owns the Gateway API rules around routes:
// GatewayClasses, Gateways and their listeners, ListenerSets, addresses,
// route attachment (which parentRefs and listeners take a route, for
// which hostnames), HTTPRoute/GRPCRoute conflicts, hostname intersection
// and listener isolation, the statuses of classes, Gateways and
// ListenerSets (and each route parent's verdict), each Gateway's listener
// and route-table plans, which Gateways reach each Service port, and
// which clusters each Gateway's fleet reaches. It asks package route to
// judge each route and render its status, package gatewaytls to resolve
// the certificates and CA bundles a Gateway names, and package
// referencegrant whether a reference across namespaces is permitted.
// PatchRoutes applies a change to HTTPRoutes and GRPCRoutes alone. It
// judges and plans; it never builds Envoy protos: it must not import the
// emitter (translator/envoy), go-control-plane, the engine (translator),
// or the other judges (translator/backendtls, translator/upstream). The
// engine emits the plans and hands back what Envoy would refuse
// (Result.Status).
package gateway
