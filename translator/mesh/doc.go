// Package mesh owns the GAMMA rules (GEP-1426, GEP-1294): which
// namespaces are in the mesh, which HTTPRoutes and GRPCRoutes name a
// Service as their parent (producer routes in the Service's namespace,
// consumer routes in the caller's), whether each such parent accepts the
// route, the routes' status entries for those parents, and the plans of
// each mesh fleet: one
// outbound listener per Service port its sidecars may call, with the
// routes that apply to the port, or straight to the port's cluster when
// none does.
//
// It judges and plans; the engine emits. It must not import the emitter
// (translator/envoy), the Gateway rules (translator/gateway), the
// BackendTLSPolicy or upstream judges, or the engine: clusters, with
// their upstream TLS, are the Service ports' own, named by plan.ClusterName.
package mesh
