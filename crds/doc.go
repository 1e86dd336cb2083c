// Package crds owns the Gateway API CRDs tlsplane pins (copies of the
// sigs.k8s.io/gateway-api module's, at the version go.mod names, embedded
// by hack/update-crds.sh) and admitting objects against them as the API
// server admits a create: the same library calls, in the same order, so a
// manifest directory mode accepts is one kubectl apply would accept, with
// the defaults the API server would fill in.
//
// It does no file I/O beyond its embedded files and has no Kubernetes
// client.
package crds
