// Package provisioner creates, for each Gateway tlsplane accepts in
// Kubernetes mode, what serves it: a ServiceAccount, a ConfigMap with the
// Envoy bootstrap (ADS to tlsplane, node cluster "<namespace>/<name>"), a
// Deployment of Envoy and a Service exposing the Gateway's listener ports,
// all in the Gateway's namespace, owned by the Gateway (garbage collection
// deletes them with it) and carrying the gateway-name label and the
// Gateway's spec.infrastructure labels and annotations that the operator's
// policy allows (translator/infrastructure: identity-granting keys such as
// eks.amazonaws.com/role-arn are dropped by default).
//
// It writes only in --provision-namespaces, where its Role is, and watches
// what it labelled only there. Its Pods always run under the ServiceAccount
// it made for them, with no token mounted; deploy/'s admission policy
// refuses any other from tlsplane's identity.
//
// It writes only while its replica leads (the status writer's Lease), by
// server-side apply under its own field manager, and only when what it
// would apply differs from what its informers show (a hash of the applied
// configuration rides on each object), so an unchanged Gateway costs no
// request. It holds no Gateway API rules: which Gateways are accepted comes
// from the translator's statuses, the Gateways themselves from the
// informers' cache.
package provisioner
