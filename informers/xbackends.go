package informers

import (
	"k8s.io/apimachinery/pkg/types"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
	gwxlisters "sigs.k8s.io/gateway-api/pkg/client/listers/apisx/v1alpha1"
)

// The experimental external backends (GEP-4894): optional like the other
// later kinds, so their lists are empty when their CRD is not installed.

func (v *view) xBackends() []*gwxv1a1.XBackend {
	return listServed(v, func(s *scope) lister[*gwxv1a1.XBackend] { return s.xBackends })
}

func (v *view) xBackendTrafficPolicies() []*gwxv1a1.XBackendTrafficPolicy {
	return listServed(v, func(s *scope) lister[*gwxv1a1.XBackendTrafficPolicy] { return s.xBackendTrafficPolicies })
}

// XBackend returns the cached XBackend namespace/name, for the status
// writer's compare before writing.
func (s *Source) XBackend(nn types.NamespacedName) (*gwxv1a1.XBackend, bool) {
	return cached(s, nn, func(sc *scope) gwxlisters.XBackendLister { return sc.xBackends }, gwxlisters.XBackendLister.XBackends)
}

// XBackendTrafficPolicy returns the cached XBackendTrafficPolicy
// namespace/name.
func (s *Source) XBackendTrafficPolicy(nn types.NamespacedName) (*gwxv1a1.XBackendTrafficPolicy, bool) {
	return cached(s, nn, func(sc *scope) gwxlisters.XBackendTrafficPolicyLister { return sc.xBackendTrafficPolicies },
		gwxlisters.XBackendTrafficPolicyLister.XBackendTrafficPolicies)
}
