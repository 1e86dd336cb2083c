// Package crds owns the Gateway API CRDs tlsplane pins (copies of the
// sigs.k8s.io/gateway-api module's, at the version go.mod names, embedded
// by hack/update-crds.sh) and admitting objects against them as the API
// server admits a create: the same library calls, in the same order, so a
// manifest directory mode accepts is one kubectl apply would accept, with
// the defaults the API server would fill in. What passed once is
// remembered, bounded (memo.go): a value seen again, or one that reads
// the same to a node's CEL rules, gets the library's earlier answer, and
// anything refused is validated again by the library, so answers are its.
// Where the library's walk can be shown to find or change nothing (no
// field to prune, no default below, no set list of two items, a scalar
// that passes each of its validators' checks), it is not run.
//
// It does no file I/O beyond its embedded files and has no Kubernetes
// client.
package crds
