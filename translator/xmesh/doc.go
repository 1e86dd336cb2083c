// Package xmesh owns the XMesh rule (GEP-3949, experimental channel): an
// XMesh of tlsplane's controller is accepted, listing the mesh features
// tlsplane claims (mesh.SupportedFeatures), unless it names parameters,
// which tlsplane does not take; an XMesh of another controller gets no
// status from us.
//
// It judges; it never builds Envoy protos (no translator/envoy) and knows
// no Gateway, route or fleet: an XMesh configures nothing Envoy serves.
package xmesh
