package conformance

import (
	"os"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/apis/v1alpha2"
	"sigs.k8s.io/gateway-api/apis/v1alpha3"
	"sigs.k8s.io/gateway-api/apis/v1beta1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
	"sigs.k8s.io/gateway-api/conformance"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	conformanceconfig "sigs.k8s.io/gateway-api/conformance/utils/config"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// TestConformance runs the suite's GATEWAY-HTTP, GATEWAY-GRPC, GATEWAY-TLS,
// GATEWAY-TCP and GATEWAY-UDP profiles, and (unless CONFORMANCE_MESH=0) its
// MESH-HTTP and MESH-GRPC profiles (on the experimental channel, the
// mesh features the suite reads from the status tlsplane writes on an
// XMesh, xmesh_test.go; on the standard channel, or with
// CONFORMANCE_MESH_XMESH=0, meshRunFeatures' list); the features
// beyond its core are those tlsplane's GatewayClass lists in
// status.supportedFeatures (the suite infers them), which depend on the
// channel of the CRDs installed (GATEWAY_API_CHANNEL). CONFORMANCE_REPORT is
// where the ConformanceReport is written; CONFORMANCE_RUN_TEST runs one
// test by its short name.
func TestConformance(t *testing.T) {
	c := newCluster(t)
	log.SetLogger(zap.New(zap.WriteTo(os.Stderr)))

	cl, err := client.New(c.api.Config, client.Options{})
	must(t, err)
	for _, install := range []func(*runtime.Scheme) error{
		v1alpha3.Install, v1alpha2.Install, v1beta1.Install, gwv1.Install, gwxv1a1.Install, apiextensionsv1.AddToScheme,
	} {
		must(t, install(cl.Scheme()))
	}
	clientset, err := kubernetes.NewForConfig(c.api.Config)
	must(t, err)

	profiles := []suite.ConformanceProfileName{
		suite.GatewayHTTPConformanceProfileName, suite.GatewayGRPCConformanceProfileName,
		suite.GatewayTLSConformanceProfileName, suite.GatewayTCPConformanceProfileName,
		suite.GatewayUDPConformanceProfileName,
	}
	var supported []features.FeatureName
	var xmesh string
	if meshEnabled() {
		profiles = append(profiles, suite.MeshHTTPConformanceProfileName, suite.MeshGRPCConformanceProfileName)
		if c.xmesh {
			// Inferred: the class's features and the XMesh's (xmesh_test.go).
			xmesh = meshName
		} else {
			supported = meshRunFeatures(t, cl)
		}
	}
	opts := suite.ConformanceOptions{
		ConfigurableOptions: suite.ConfigurableOptions{
			GatewayClassName:     GatewayClassName,
			MeshName:             xmesh,
			CleanupBaseResources: true,
			CleanupTestResources: true,
			Mode:                 "default",
			TimeoutConfig:        conformanceconfig.DefaultTimeoutConfig(),
			ConformanceProfiles:  profiles,
			SupportedFeatures:    supported,
			ReportOutputPath:     os.Getenv("CONFORMANCE_REPORT"),
			// GatewayStaticAddresses: the provisioner gives a Gateway an
			// address of the bridge's static range; TEST-NET-1 is on no
			// network here, so it cannot.
			UsableNetworkAddresses:   []gwv1.GatewaySpecAddress{{Type: new(gwv1.IPAddressType), Value: c.network.StaticAddress(10)}},
			UnusableNetworkAddresses: []gwv1.GatewaySpecAddress{{Type: new(gwv1.IPAddressType), Value: "192.0.2.10"}},
			RunTest:                  os.Getenv("CONFORMANCE_RUN_TEST"),
			Implementation: confv1.Implementation{
				Organization: "tlsplane",
				Project:      "tlsplane",
				URL:          "https://github.com/tlsplane/tlsplane",
				Version:      implementationVersion(),
				Contact:      []string{"https://github.com/tlsplane/tlsplane/issues"},
			},
		},
		Client:     cl,
		Clientset:  clientset,
		RestConfig: c.api.Config,
	}
	t.Cleanup(func() {
		for _, why := range c.agent.Unrunnable() {
			t.Logf("node agent: not run: %s", why)
		}
	})
	conformance.RunConformanceWithOptions(t, opts)
}

// implementationVersion is the commit under test (CONFORMANCE_VERSION,
// set by make conformance), else "dev".
func implementationVersion() string {
	if v := os.Getenv("CONFORMANCE_VERSION"); v != "" {
		return v
	}
	return "dev"
}
