// Package gateway owns the Gateway API rules: GatewayClasses, Gateways and
// their listeners, certificates and client certificate validation
// (spec.tls.frontend), HTTPRoutes, ReferenceGrants, hostname
// intersection and route precedence, statuses, each Gateway's listener and
// route-table plans, and which Gateways reach each Service port.
// PatchRoutes applies a change to HTTPRoutes alone. It judges and plans;
// it never builds Envoy protos: it must not import the emitter
// (translator/envoy) or go-control-plane. The engine emits the plans and
// hands back what Envoy would refuse (Result.Status).
package gateway
