// Package informers is Kubernetes mode's source: client-go shared informers
// for Services, EndpointSlices, ConfigMaps and Secrets, and the Gateway API
// informer for BackendTLSPolicy v1, turned into translator.Inputs and a
// "something relevant changed" signal.
//
// It only reads the API server; statuses are written by package
// statuswriter. It holds no BackendTLSPolicy semantics beyond which objects
// a policy refers to.
package informers
