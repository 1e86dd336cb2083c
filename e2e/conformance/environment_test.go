package conformance

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
	"github.com/tlsplane/tlsplane/e2e/harness"
	"github.com/tlsplane/tlsplane/e2e/node"
)

// GatewayClassName is the class the suite runs against.
const GatewayClassName = "tlsplane-conformance"

// controllerName is tlsplane's default --controller-name.
const controllerName gwv1.GatewayController = "tlsplane.io/controller"

// cluster is everything the suite talks to, started by newCluster and
// stopped at the test's end.
type cluster struct {
	api      *apiserver.Server
	tlsplane *harness.TLSPlane
	agent    *node.Agent
	network  *node.Network
	logDir   string
	// xmesh: XMesh meshName exists, accepted with the mesh features
	// (xmeshInferred).
	xmesh bool
}

// need fails under CI=true, where the suite must run, and skips elsewhere.
func need(t *testing.T, what string, err error) {
	t.Helper()
	harness.Prerequisite(t, "conformance needs "+what, err)
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	if os.Geteuid() != 0 {
		need(t, "root (network namespaces)", fmt.Errorf("running as uid %d", os.Geteuid()))
	}
	_, err := exec.LookPath("ip")
	need(t, "ip (iproute2)", err)
	tlsplaneBin, err := harness.TLSPlaneBinary()
	need(t, "the tlsplane binary", err)
	envoyBin, err := harness.EnvoyBinary()
	need(t, "Envoy", err)
	images, err := node.ConformanceImages()
	need(t, "the images' binaries", err)
	// The Envoys tlsplane's Gateway provisioner deploys run as the Envoy
	// under test.
	images["envoyproxy/envoy"] = envoyBin
	// The injected capture and bootstrap steps run tlsplane itself.
	images[tlsplaneImage] = tlsplaneBin

	logDir := os.Getenv("CONFORMANCE_LOG_DIR")
	if logDir == "" {
		logDir = t.TempDir()
	}
	must(t, os.MkdirAll(logDir, 0o755))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	channel, err := apiserver.GatewayAPIChannel()
	must(t, err)
	startCtx, startCancel := context.WithTimeout(ctx, 3*time.Minute)
	defer startCancel()
	api, err := apiserver.Start(startCtx)
	need(t, "kube-apiserver (make kube-apiserver)", err)
	t.Cleanup(func() {
		copyLog(t, filepath.Join(api.Dir, "kube-apiserver.log"), logDir)
		copyLog(t, filepath.Join(api.Dir, "kube-controller-manager.log"), logDir)
		api.Stop()
	})
	t.Logf("kube-apiserver ready in %s at %s, with the %s channel's Gateway API CRDs", api.Ready.Round(time.Millisecond), api.URL, channel)
	kcm, err := api.StartControllerManager(apiserver.ClusterControllers)
	need(t, "kube-controller-manager (make kube-apiserver)", err)
	t.Cleanup(kcm.Stop)

	client, err := kubernetes.NewForConfig(api.Config)
	must(t, err)
	gw, err := gwclient.NewForConfig(api.Config)
	must(t, err)

	network, err := node.NewNetwork()
	must(t, err)
	t.Cleanup(network.Close)
	// The API server reads Pod logs (the mirror tests) from the agent.
	kubeletCert, err := api.KubeletServingCertificate(network.Gateway)
	must(t, err)
	agent, err := node.StartAgent(ctx, t, client, network, images, "conformance-node", logDir, node.KubeletTLS{
		Certificate: kubeletCert, ClientCAs: api.KubeletClientCAs(), ClientName: apiserver.KubeletClientName,
	}, meshAgentOptions(ctx, t, client, network)...)
	must(t, err)
	// The mesh tests exec the echo-advanced image's client in its Pods.
	commands, err := node.ConformanceCommands()
	need(t, "the images' commands", err)
	for _, c := range commands {
		agent.AllowCommand(c.Image, c.Name, c.Binary)
	}

	// Envoys in their namespaces reach tlsplane on the bridge; plaintext
	// xDS is allowed there because nothing but this test's namespaces is
	// on that link.
	xdsPort := harness.FreePort(t)
	cp := harness.StartTLSPlane(t, harness.TLSPlaneOptions{
		Bin: tlsplaneBin, LogDir: logDir, Name: "tlsplane", XDSHost: network.Gateway,
		XDSPort: xdsPort,
		Args: []string{"--kubeconfig", api.Kubeconfig, "--insecure-xds", "--controller-name", string(controllerName),
			"--gateway-api-channel", channel, "--mesh-namespaces", meshNamespaces,
			// tlsplane's own Gateway provisioner runs as in a cluster: it
			// creates each Gateway's ServiceAccount, bootstrap, Deployment
			// and Service with spec.infrastructure's labels (what
			// GatewayInfrastructureMetadata checks), whose Pods the node agent
			// runs with the Envoy under test. The suite's traffic goes to
			// the Envoys of the e2e provisioner below, which also publishes
			// the addresses (no load balancer here fills the provisioned
			// Services' ingress).
			// Every namespace: the suite's Gateways are in several, and
			// the API server's admin identity grants everything.
			"--provision-gateways", "--provision-namespaces", "*", "--gateway-xds-address", net.JoinHostPort(network.Gateway, strconv.Itoa(xdsPort))},
		Env:          []string{"POD_NAME=tlsplane-conformance"},
		ReadyTimeout: 90 * time.Second,
	})
	if meshEnabled() {
		startInjector(t, api.Kubeconfig, tlsplaneBin, logDir, net.JoinHostPort(network.Gateway, strconv.Itoa(xdsPort)), client)
	}
	_, err = node.StartProvisioner(ctx, t, client, gw, network, controllerName, envoyBin, cp.XDSAddress(), logDir)
	must(t, err)

	_, err = gw.GatewayV1().GatewayClasses().Create(ctx, &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: GatewayClassName},
		Spec:       gwv1.GatewayClassSpec{ControllerName: controllerName},
	}, metav1.CreateOptions{})
	must(t, err)
	// The suite reads the class's supportedFeatures once, at its start.
	err = harness.Eventually(60*time.Second, 200*time.Millisecond, func() error {
		gc, err := gw.GatewayV1().GatewayClasses().Get(ctx, GatewayClassName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(gc.Status.SupportedFeatures) == 0 {
			return fmt.Errorf("GatewayClass %s has no status.supportedFeatures yet", GatewayClassName)
		}
		return nil
	})
	must(t, err)
	xmesh := xmeshInferred(channel)
	if xmesh {
		createXMesh(ctx, t, gw)
	}
	return &cluster{api: api, tlsplane: cp, agent: agent, network: network, logDir: logDir, xmesh: xmesh}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// copyLog keeps a server's log beside the others once it stops.
func copyLog(t *testing.T, path, dir string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(path)), data, 0o644); err != nil {
		t.Logf("keeping %s: %v", path, err)
	}
}
