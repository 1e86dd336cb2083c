// Package inject owns the mesh's injection (docs/mesh.md, "Injection"):
// the mutating admission webhook that adds the capture init step, the
// bootstrap init step and the native sidecar Envoy to a Pod created in a
// namespace in the mesh. It decides from the Pod and its namespace alone
// and answers with a JSONPatch; it never writes to the API server, and it
// knows nothing of the translator beyond the namespace selector.
package inject
