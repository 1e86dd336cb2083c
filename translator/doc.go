// Package translator turns Gateway API BackendTLSPolicies, Gateways and
// HTTPRoutes, and the Services, EndpointSlices, ConfigMaps and Secrets
// they refer to, into Envoy resources per fleet, plus the status of every
// object it owns.
//
// This package keeps the public API (Translate, Translator, Update, the
// Inputs and Output types) and the incremental engine; the rules and the
// protos live below it, in layers whose imports point one way (TestLayers
// checks them): leaves (input, condition, tlsopts, capem), the plan, the
// judging packages (backendtls, gateway, upstream), which decide plans,
// and the emitter (envoy), which turns plans into validated protos. The
// engine judges, emits, feeds what Envoy would refuse back into the
// verdicts, and only then writes statuses.
//
// It must stay pure: no I/O, no goroutines, no clock but the `now` passed
// in, no globals that change, and deterministic, sorted output.
package translator
