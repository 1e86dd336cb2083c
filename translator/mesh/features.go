package mesh

import gwv1 "sigs.k8s.io/gateway-api/apis/v1"

// SupportedFeatures are the mesh features tlsplane claims (GEP-1426's
// "Mesh" and every extended mesh feature of the suite, each of whose tests
// passes on both channels and is on e2e/conformance/passing.txt): the one
// list the conformance runs give the suite and an XMesh's status carries.
// Never in a GatewayClass's supportedFeatures: the suite drops mesh
// features found there, and Gateway features found in an XMesh. An
// extended feature joins only when its tests pass in `make conformance`.
// Sorted.
var SupportedFeatures = []gwv1.FeatureName{
	"Mesh",
	"MeshClusterIPMatching",
	"MeshConsumerRoute",
	"MeshHTTPRouteBackendRequestHeaderModification",
	"MeshHTTPRouteNamedRouteRule",
	"MeshHTTPRouteQueryParamMatching",
	"MeshHTTPRouteRedirectPath",
	"MeshHTTPRouteRedirectPort",
	"MeshHTTPRouteRewritePath",
	"MeshHTTPRouteSchemeRedirect",
}
