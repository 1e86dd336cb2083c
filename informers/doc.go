// Package informers is Kubernetes mode's source: client-go shared informers
// for Services, EndpointSlices, ConfigMaps, Secrets and Namespaces, and the
// Gateway API informers for BackendTLSPolicy, GatewayClass, Gateway,
// ListenerSet, ReferenceGrant (v1, or v1beta1 where only that is served)
// and every route kind (translator.RouteKinds: each is watched through
// its description's resource), and the experimental XBackend,
// XBackendTrafficPolicy and (cluster-scoped) XMesh
// (gateway.networking.x-k8s.io/v1alpha1), turned
// into translator.Inputs and a
// "something relevant changed" signal.
//
// BackendTLSPolicy's CRD is required (its informer retries until it is
// installed). The other Gateway API CRDs are optional: API discovery at
// start-up decides which are watched, and a missing one is logged by name
// and read as an empty list, so a cluster with only BackendTLSPolicy keeps
// being served. When Gateways are watched, Secrets keep tls.crt and tls.key
// (listener certificates) besides ca.crt; otherwise no private key is held.
//
// WaitForAPIServer is the transport of every API server client of
// Kubernetes mode (the status writer's and the Lease's too): requests wait
// out an API server outage instead of growing the reflectors' backoff.
//
// It only reads the API server; statuses are written by package
// statuswriter, which hears from NotifyStatusChanges of the updates that
// changed nothing but a status of a kind it writes: those signal no
// translation. It holds no Gateway API semantics beyond which objects
// refer to which Secrets and ConfigMaps.
package informers
