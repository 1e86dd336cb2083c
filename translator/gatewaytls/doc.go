// Package gatewaytls resolves the TLS material a Gateway names: its
// listeners' certificates (tls.certificateRefs), its client certificate
// validation (spec.tls.frontend) and the client certificate it presents
// to backends (spec.tls.backend), each as the plan's values or the reason
// and message a status reports. References across namespaces go through
// package referencegrant. It judges no listener, route or status: the
// gateway package asks it. It must not import the gateway or route
// packages, the emitter (translator/envoy), the engine (translator) or
// go-control-plane.
package gatewaytls
