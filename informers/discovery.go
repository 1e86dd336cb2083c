package informers

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
)

// served is which of the optional Gateway API kinds the API server serves.
//
// BackendTLSPolicy is required, as it always was: without its CRD the
// informer retries (and warns) until it is installed. The kinds below came
// later (and the experimental XBackend, XBackendTrafficPolicy and XMesh, of
// gateway.networking.x-k8s.io, are in few clusters); a cluster that has only BackendTLSPolicy's CRD must keep being
// served, so a kind whose CRD is missing is logged once, at start-up,
// naming the CRD, and read as an empty list. A CRD installed afterwards is
// read after a restart.
type served struct {
	gatewayClasses, gateways, listenerSets bool
	// routes are the route kinds (translator.RouteKinds) served.
	routes map[translator.Kind]bool
	// referenceGrants is the version read: "v1" when served, else
	// "v1beta1" (the CRD's storage version, and the only one of older
	// releases), else "" when neither is.
	referenceGrants string
	// xBackends, xBackendTrafficPolicies: the experimental external
	// backends (GEP-4894, gateway.networking.x-k8s.io).
	xBackends, xBackendTrafficPolicies bool
	// xMeshes: the experimental, cluster-scoped XMesh (GEP-3949), whose
	// status lists the mesh features.
	xMeshes bool
}

// CRD names, as logs and errors name them; a route kind's is in its
// description (RouteKind.CRD).
const (
	crdGatewayClasses  = "gatewayclasses.gateway.networking.k8s.io"
	crdGateways        = "gateways.gateway.networking.k8s.io"
	crdListenerSets    = "listenersets.gateway.networking.k8s.io"
	crdReferenceGrants = "referencegrants.gateway.networking.k8s.io"

	crdXBackends               = "xbackends.gateway.networking.x-k8s.io"
	crdXBackendTrafficPolicies = "xbackendtrafficpolicies.gateway.networking.x-k8s.io"
	crdXMeshes                 = "xmeshes.gateway.networking.x-k8s.io"
)

// discover asks the API server which Gateway API resources it serves. A
// group version it does not know is an answer (nothing served); any other
// failure is an error.
func discover(d discovery.DiscoveryInterface) (served, error) {
	v1, err := resourcesOf(d, gwv1.GroupVersion.String())
	if err != nil {
		return served{}, err
	}
	s := served{gatewayClasses: v1["gatewayclasses"], gateways: v1["gateways"], listenerSets: v1["listenersets"], routes: map[translator.Kind]bool{}}
	for _, rk := range translator.RouteKinds {
		if r := rk.Resource(); r.GroupVersion() == gwv1.SchemeGroupVersion && v1[r.Resource] {
			s.routes[rk.Kind()] = true
		}
	}
	x, err := resourcesOf(d, gwxv1a1.GroupVersion.String())
	if err != nil {
		return served{}, err
	}
	s.xBackends, s.xBackendTrafficPolicies, s.xMeshes = x["xbackends"], x["xbackendtrafficpolicies"], x["xmeshes"]
	if v1["referencegrants"] {
		s.referenceGrants = "v1"
		return s, nil
	}
	v1beta1, err := resourcesOf(d, gwv1beta1.GroupVersion.String())
	if err != nil {
		return served{}, err
	}
	if v1beta1["referencegrants"] {
		s.referenceGrants = "v1beta1"
	}
	return s, nil
}

func resourcesOf(d discovery.DiscoveryInterface, groupVersion string) (map[string]bool, error) {
	list, err := d.ServerResourcesForGroupVersion(groupVersion)
	if apierrors.IsNotFound(err) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovery of %s: %w", groupVersion, err)
	}
	out := make(map[string]bool, len(list.APIResources))
	for _, r := range list.APIResources {
		out[r.Name] = true
	}
	return out, nil
}

// discoverUntil retries discover, as informers retry a list, until it
// answers or ctx ends (ok false).
func (s *Source) discoverUntil(ctx context.Context) (served, bool) {
	var got served
	backoff := wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 1 << 30, Cap: 10 * time.Second}
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(context.Context) (bool, error) {
		var err error
		got, err = discover(s.discovery)
		if err != nil {
			s.log.Warn("API discovery failed; retrying", "error", err)
			s.metrics.watchErrors.WithLabelValues("discovery").Inc()
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return served{}, false
	}
	for _, missing := range got.missing() {
		s.log.Warn("CustomResourceDefinition not installed: its kind is read as empty until tlsplane restarts after it is installed; BackendTLSPolicy is served regardless",
			"crd", missing)
	}
	return got, true
}

// missing names the CRDs of the kinds not served.
func (s served) missing() []string {
	var out []string
	for _, k := range []struct {
		served bool
		crd    string
	}{{s.gatewayClasses, crdGatewayClasses}, {s.gateways, crdGateways}, {s.listenerSets, crdListenerSets}} {
		if !k.served {
			out = append(out, k.crd)
		}
	}
	for _, rk := range translator.RouteKinds {
		if !s.routes[rk.Kind()] {
			out = append(out, rk.CRD())
		}
	}
	if s.referenceGrants == "" {
		out = append(out, crdReferenceGrants)
	}
	if !s.xBackends {
		out = append(out, crdXBackends)
	}
	if !s.xBackendTrafficPolicies {
		out = append(out, crdXBackendTrafficPolicies)
	}
	if !s.xMeshes {
		out = append(out, crdXMeshes)
	}
	return out
}
