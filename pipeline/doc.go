// Package pipeline runs the control plane's one direction of flow: a
// Source's objects are translated, published as snapshots, and the
// resulting policy statuses (and, to a GatewayAPISink, the GatewayClass,
// Gateway, ListenerSet and route statuses of every route kind,
// translator.RouteKinds) handed to a StatusSink.
//
// It owns the debounce, the order publish-then-status, and the previous
// status fed back into translation. It builds no Envoy protos and talks
// to neither the API server nor Envoy.
package pipeline
