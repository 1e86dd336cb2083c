// Package gateway owns the Gateway API rules around routes:
// GatewayClasses, Gateways and their listeners, certificates and client
// certificate validation (spec.tls.frontend), ListenerSets, addresses,
// route attachment, hostname intersection, HTTPRoute/GRPCRoute conflicts,
// the statuses of classes, Gateways, ListenerSets and routes, each
// Gateway's listener and route-table plans, and which Gateways reach each
// Service port. It asks the route package to judge each route, and the
// referencegrant package whether a reference across namespaces is
// permitted. PatchRoutes applies a change to HTTPRoutes and GRPCRoutes
// alone. It judges and plans; it never builds Envoy protos: it must not
// import the emitter (translator/envoy), go-control-plane, the engine
// (translator), or the other judges (translator/backendtls,
// translator/upstream). The engine emits the plans and hands back what
// Envoy would refuse (Result.Status).
package gateway
