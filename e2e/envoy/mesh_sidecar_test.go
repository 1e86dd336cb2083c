package envoy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// The Pod's world, inside the test's network namespace: Service cluster
// IPs and Pod IPs are addresses on its loopback device, so nothing leaves
// the namespace and nothing listens outside it.
const (
	meshV1IP, meshV2IP       = "10.96.0.10", "10.96.0.11" // cluster IPs
	meshTLSIP, meshWrongCAIP = "10.96.0.12", "10.96.0.13"
	meshWrongSANIP           = "10.96.0.14"
	// meshClientName is the client certificate echo-tls's policy names
	// (tlsplane.io/clientCertificateRef): the sidecar presents it.
	meshClientName              = "mesh-sidecar-client"
	podV1, podV2, podTLS        = "10.244.0.10", "10.244.0.11", "10.244.0.12"
	podDirect                   = "10.244.0.99" // a Pod no Service selects: passthrough
	meshXDS, meshAdmin          = "127.0.0.1:18000", "127.0.0.1:18001"
	meshSidecarAdmin            = 15000
	meshSidecarUID, meshAppUID  = 1337, 1000
	meshTLSHost                 = "echo-tls.shop.example"
	meshRouteHeader, meshRouted = "X-Mesh-Route", "producer"
	meshXDSName                 = "tlsplane.tlsplane-system.svc" // tlsplane's certificate names it
)

// TestMeshSidecar proves milestone 2 of docs/mesh.md with a real sidecar
// Envoy and real capture: in a network namespace of its own, `tlsplane
// capture` programs nftables, a sidecar Envoy runs as UID 1337 with the
// bootstrap `tlsplane sidecar-bootstrap` prints, connected to `tlsplane
// serve --dir` (mesh namespace shop), and a client running as UID 1000
// that knows nothing of the mesh connects to Service cluster IPs. xDS is
// mutual TLS with the sidecar's workload certificate (ServiceAccount
// shop/client); one of namespace other reads no Mesh/shop. An
// HTTPRoute whose parent is the Service adds a header and splits by path;
// a port without a route reaches the Service unchanged; an address no
// listener matches goes through the passthrough; a BackendTLSPolicy makes
// the sidecar originate TLS, and a wrong CA fails closed; removing the
// capture takes the Pod out of the mesh.
func TestMeshSidecar(t *testing.T) {
	n := newNetNS(t, "tlsplane-mesh")
	root, err := filepath.Abs(filepath.Join("..", ".cache", "envoy-e2e", "mesh-sidecar"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	logDir, manifestDir := filepath.Join(root, "logs"), filepath.Join(root, "manifests")
	for _, d := range []string{logDir, manifestDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	envoyBin := harness.EnvoyBin(t)
	tlsplaneBin, _, err := harness.TLSPlaneOrBuild(root)
	if err != nil {
		t.Fatal(err)
	}
	backendBin := harness.BackendBin(t, root)

	for _, ip := range []string{meshV1IP, meshV2IP, meshTLSIP, meshWrongCAIP, meshWrongSANIP, podV1, podV2, podTLS, podDirect} {
		n.run(t, "ip", "addr", "add", ip+"/32", "dev", "lo")
	}
	ca, wrongCA := harness.NewAuthority(t, "mesh e2e CA"), harness.NewAuthority(t, "mesh e2e wrong CA")
	leaf := ca.IssueFiles(t, harness.LeafSpec{CommonName: meshTLSHost, DNSNames: []string{meshTLSHost}},
		filepath.Join(root, "echo-tls.crt"), filepath.Join(root, "echo-tls.key"))
	// The HTTPS backend requires a client certificate clientCA signed.
	clientCA := harness.NewAuthority(t, "mesh e2e client CA")
	client := clientCA.Issue(t, harness.LeafSpec{CommonName: meshClientName, Client: true})
	clientCAFile := filepath.Join(root, "client-ca.pem")
	if err := os.WriteFile(clientCAFile, clientCA.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(manifestDir, "mesh.yaml"), meshManifests(ca.PEM, wrongCA.PEM, client), 0o644); err != nil {
		t.Fatal(err)
	}

	// Backends: plain HTTP echo servers on Pod IPs, and one HTTPS.
	for _, b := range []struct{ name, listen string }{{"v1", podV1 + ":8080"}, {"v2", podV2 + ":8080"}, {"direct", podDirect + ":9000"}} {
		p := harness.StartCmd(t, logDir, "backend-"+b.name, n.command(0, backendBin, "--plain", "--listen", b.listen, "--name", b.name))
		n.waitGet(t, p, "http://"+b.listen+"/_count", 10*time.Second)
	}
	harness.StartCmd(t, logDir, "backend-tls", n.command(0, backendBin, "--listen", podTLS+":8443", "--name", "tls", "--cert", leaf.CertFile, "--key", leaf.KeyFile, "--client-ca", clientCAFile))

	// xDS mutual TLS as a mesh runs it: tlsplane's default
	// --xds-mesh-identity admits a certificate of any ServiceAccount of
	// shop to Mesh/shop.
	pki := newMeshPKI(t, root)
	tp := harness.StartCmd(t, logDir, "tlsplane", n.command(0, tlsplaneBin, "serve", "--dir", manifestDir, "--xds-address", meshXDS, "--admin-address", meshAdmin,
		"--xds-tls-cert", pki.server.CertFile, "--xds-tls-key", pki.server.KeyFile, "--xds-client-ca", pki.caFile))
	n.waitGet(t, tp, "http://"+meshAdmin+"/readyz", 30*time.Second)

	// The init step, then the sidecar, as the injected Pod runs them.
	out := n.run(t, tlsplaneBin, "capture", "--sidecar-uid", strconv.Itoa(meshSidecarUID))
	t.Logf("capture: %s", strings.TrimSpace(out))
	startSidecar := func(name string, workload *harness.Leaf, adminPort, capturePort int) *harness.Process {
		bootstrap := filepath.Join(root, name+"-bootstrap.yaml")
		n.run(t, tlsplaneBin, "sidecar-bootstrap", "--namespace", "shop", "--pod", name, "--service-account", "client",
			"--xds-address", meshXDS, "--xds-api-type", "GRPC", "--admin-port", strconv.Itoa(adminPort), "--capture-port", strconv.Itoa(capturePort),
			"--xds-tls-cert", workload.CertFile, "--xds-tls-key", workload.KeyFile, "--xds-tls-ca", pki.caFile, "--xds-server-name", meshXDSName, "-o", bootstrap)
		return harness.StartCmd(t, logDir, name, n.command(meshSidecarUID, envoyBin, "-c", bootstrap,
			"--disable-hot-restart", "--concurrency", "1", "-l", "info", "--drain-time-s", "1"))
	}
	sidecar := startSidecar("sidecar", pki.shopClient, meshSidecarAdmin, 15001)
	m := &meshEnv{n: n, sidecar: sidecar, tlsplane: tp, logDir: logDir}
	t.Cleanup(func() {
		if t.Failed() {
			m.saveConfigDump(t)
		}
	})
	n.waitGet(t, sidecar, m.adminURL("/ready"), 60*time.Second)
	if uid := processUID(t, sidecar.PID()); uid != meshSidecarUID {
		t.Fatalf("the sidecar runs as UID %d, want %d", uid, meshSidecarUID)
	}

	t.Run("route-adds-a-header", func(t *testing.T) {
		e := m.await(t, "http://"+meshV1IP+"/", func(e echo) error {
			if e.Name != "v1" || e.header(meshRouteHeader) != meshRouted {
				return fmt.Errorf("backend %q with %s %q, want v1 with %q", e.Name, meshRouteHeader, e.header(meshRouteHeader), meshRouted)
			}
			return nil
		})
		t.Logf("%s:80/ reached %s with %s: %s", meshV1IP, e.Name, meshRouteHeader, e.header(meshRouteHeader))
	})
	t.Run("route-sends-a-path-to-another-backend", func(t *testing.T) {
		m.await(t, "http://"+meshV1IP+"/v2/x", func(e echo) error {
			if e.Name != "v2" || e.Path != "/v2/x" {
				return fmt.Errorf("backend %q path %q, want v2 and /v2/x", e.Name, e.Path)
			}
			return nil
		})
	})
	t.Run("port-without-route-reaches-the-service-unchanged", func(t *testing.T) {
		// Nothing listens on the cluster IP itself: only the sidecar's
		// listener for echo-v1:81 can carry this connection to v1.
		m.await(t, "http://"+meshV1IP+":81/plain", func(e echo) error {
			if e.Name != "v1" || e.header(meshRouteHeader) != "" || e.Host != meshV1IP+":81" || e.Path != "/plain" {
				return fmt.Errorf("backend %q, %s %q, host %q, path %q; want v1 unchanged", e.Name, meshRouteHeader, e.header(meshRouteHeader), e.Host, e.Path)
			}
			return nil
		})
	})
	t.Run("address-no-listener-matches-goes-through-passthrough", func(t *testing.T) {
		before := m.stat(t, "cluster.passthrough.upstream_cx_total")
		m.await(t, "http://"+podDirect+":9000/direct", func(e echo) error {
			if e.Name != "direct" || e.Host != podDirect+":9000" || e.header(meshRouteHeader) != "" {
				return fmt.Errorf("backend %q, host %q, %s %q; want direct unchanged", e.Name, e.Host, meshRouteHeader, e.header(meshRouteHeader))
			}
			return nil
		})
		if after := m.stat(t, "cluster.passthrough.upstream_cx_total"); after <= before {
			t.Errorf("passthrough connections %d before, %d after: the request did not go through the sidecar", before, after)
		}
	})
	t.Run("backendtlspolicy-the-sidecar-originates-tls", func(t *testing.T) {
		// The policy's SAN matches, its option caps the version at TLS
		// 1.2, and its client certificate is what the backend requires.
		m.await(t, "http://"+meshTLSIP+":443/", func(e echo) error {
			if e.Name != "tls" || e.SNI != meshTLSHost || e.TLSVersion != "TLS 1.2" || e.ClientSubject != meshClientName {
				return fmt.Errorf("backend %q, SNI %q, TLS %q, client %q; want tls over TLS 1.2 with SNI %s and client %s",
					e.Name, e.SNI, e.TLSVersion, e.ClientSubject, meshTLSHost, meshClientName)
			}
			return nil
		})
	})
	t.Run("backendtlspolicy-wrong-san-fails-closed", func(t *testing.T) {
		m.awaitListener(t, meshWrongSANIP+":443")
		failures := func() int64 { return m.statSum(t, "cluster.", ".ssl.fail_verify_san") }
		before := failures()
		if e, err := m.curl("http://" + meshWrongSANIP + ":443/"); err == nil {
			t.Fatalf("a backend whose certificate lacks the policy's SAN answered: %+v", e)
		}
		if err := harness.Eventually(applyTimeout, 200*time.Millisecond, func() error {
			if after := failures(); after <= before {
				return fmt.Errorf("ssl.fail_verify_san %d, want more than %d", after, before)
			}
			return nil
		}); err != nil {
			t.Errorf("the request failed, but not on the SAN: %v", err)
		}
	})
	t.Run("backendtlspolicy-wrong-ca-fails-closed", func(t *testing.T) {
		// The listener exists (its cluster is served) before the check.
		m.awaitListener(t, meshWrongCAIP+":443")
		failures := func() int64 { return m.statSum(t, "cluster.", ".ssl.fail_verify_error") }
		before := failures()
		e, refused := m.curl("http://" + meshWrongCAIP + ":443/")
		if refused == nil {
			t.Fatalf("a backend verified by the wrong CA answered: %+v", e)
		}
		if err := harness.Eventually(applyTimeout, 200*time.Millisecond, func() error {
			if after := failures(); after <= before {
				return fmt.Errorf("ssl.fail_verify_error %d, want more than %d", after, before)
			}
			return nil
		}); err != nil {
			t.Errorf("the request failed (%v), but not on verification: %v", refused, err)
		}
		// The sidecar streams its counters to tlsplane's metrics service
		// (every 5 s, over its xDS connection) as a Gateway Envoy does:
		// its failures are counted against the policy. Requests go on
		// while waiting: an Envoy's first flush is only its baseline.
		series := `tlsplane_upstream_tls_failures_total{policy="shop/echo-wrong-ca",reason="CertificateVerifyFailed"}`
		if err := harness.Eventually(30*time.Second, 500*time.Millisecond, func() error {
			if e, err := m.curl("http://" + meshWrongCAIP + ":443/"); err == nil {
				t.Fatalf("a backend verified by the wrong CA answered: %+v", e)
			}
			body, err := m.n.get("http://" + meshAdmin + "/metrics")
			if err != nil {
				return err
			}
			if !strings.Contains(string(body), series) {
				return fmt.Errorf("tlsplane's /metrics has no %s", series)
			}
			return nil
		}); err != nil {
			t.Errorf("the sidecar's handshake failures did not reach tlsplane: %v\n--- tlsplane log:\n%s", err, tp.LogTail(10))
		}
		// No Gateway reaches these policies: the condition is on their
		// Service's entry, False for the wrong CA and True for echo-tls,
		// whose handshakes the loop keeps making.
		for _, want := range []struct{ policy, status, reason string }{
			{"echo-wrong-ca", "False", "CertificateVerifyFailed"},
			{"echo-tls", "True", "HandshakesSucceeding"},
		} {
			if err := harness.Eventually(30*time.Second, 500*time.Millisecond, func() error {
				m.curl("http://" + meshWrongCAIP + ":443/")
				m.curl("http://" + meshTLSIP + ":443/")
				body, err := m.n.get("http://" + meshAdmin + "/debug/status")
				if err != nil {
					return err
				}
				c, on, err := policyHandshakeCondition(body, "shop", want.policy)
				switch {
				case err != nil:
					return err
				case c == nil:
					return fmt.Errorf("policy shop/%s has no tlsplane.io/HandshakesSucceeding", want.policy)
				case c.Status != want.status || c.Reason != want.reason || on != "Service/"+want.policy:
					return fmt.Errorf("policy shop/%s: HandshakesSucceeding=%s %s on %s (%s); want %s %s on Service/%s",
						want.policy, c.Status, c.Reason, on, c.Message, want.status, want.reason, want.policy)
				}
				return nil
			}); err != nil {
				t.Errorf("the sidecar's handshakes did not reach the policy's status: %v", err)
			}
		}
	})
	t.Run("a-certificate-of-another-namespace-reads-no-mesh-fleet", func(t *testing.T) {
		refused := func() int64 { return m.metric(t, "tlsplane_xds_streams_refused_total") }
		before := refused()
		intruder := startSidecar("sidecar-other-namespace", pki.otherClient, meshSidecarAdmin+100, 15101)
		if err := harness.Eventually(applyTimeout, 200*time.Millisecond, func() error {
			if after := refused(); after <= before {
				return fmt.Errorf("tlsplane_xds_streams_refused_total %d, want more than %d", after, before)
			}
			return nil
		}); err != nil {
			t.Fatalf("a sidecar claiming Mesh/shop with a certificate of namespace other: %v\n--- tlsplane log:\n%s", err, tp.LogTail(10))
		}
		if !strings.Contains(tp.Log(), `"xDS stream refused" stage=xds node=sidecar-other-namespace.shop fleet=Mesh/shop`) {
			t.Errorf("tlsplane's log names no refusal of sidecar-other-namespace.shop:\n%s", tp.LogTail(10))
		}
		if strings.Contains(tp.Log(), "node=sidecar.shop fleet=Mesh/shop error") {
			t.Errorf("tlsplane refused the sidecar of shop too:\n%s", tp.LogTail(10))
		}
		url := "http://127.0.0.1:" + strconv.Itoa(meshSidecarAdmin+100)
		if body, err := n.get(url + "/listeners"); err == nil && strings.Contains(string(body), meshV1IP) {
			t.Errorf("the refused sidecar holds shop's listeners:\n%s", body)
		}
		intruder.Stop(5 * time.Second)
	})
	t.Run("removing-the-capture-leaves-the-mesh", func(t *testing.T) {
		out := n.run(t, tlsplaneBin, "capture", "--remove", "--netns", n.path)
		if !strings.Contains(out, "removed table ip tlsplane_mesh") {
			t.Fatalf("capture --remove: %s", out)
		}
		before := m.stat(t, "cluster.passthrough.upstream_cx_total")
		if e, err := m.curl("http://" + meshV1IP + "/"); err == nil {
			t.Errorf("the cluster IP answered without the capture: %+v", e)
		}
		e, err := m.curl("http://" + podDirect + ":9000/")
		if err != nil || e.Name != "direct" {
			t.Errorf("the Pod IP without the capture: %+v, %v; want direct", e, err)
		}
		if after := m.stat(t, "cluster.passthrough.upstream_cx_total"); after != before {
			t.Errorf("passthrough connections %d before, %d after: still captured", before, after)
		}
		if out := n.run(t, tlsplaneBin, "capture", "--remove"); !strings.Contains(out, "nothing was captured") {
			t.Errorf("a second capture --remove: %s", out)
		}
	})
}

// meshManifests is namespace shop in the mesh: echo-v1 (ports 80 with a
// route, 81 without), echo-v2, echo-tls, echo-wrong-ca and echo-wrong-san
// (one HTTPS Pod, each with a BackendTLSPolicy: the first with a SAN that
// matches, TLS 1.2 at most and client's certificate, the second naming
// the wrong CA, the third a SAN the certificate lacks).
func meshManifests(caPEM, wrongCAPEM []byte, client *harness.Leaf) []byte {
	indent := func(pem []byte) string {
		return "    " + strings.ReplaceAll(strings.TrimSpace(string(pem)), "\n", "\n    ")
	}
	service := func(name, ip, ports string) string {
		return fmt.Sprintf(`---
apiVersion: v1
kind: Service
metadata: {name: %s, namespace: shop}
spec: {clusterIP: %s, ports: %s}
`, name, ip, ports)
	}
	slice := func(name, ip, ports string) string {
		return fmt.Sprintf(`---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %s-1, namespace: shop, labels: {kubernetes.io/service-name: %s}}
addressType: IPv4
endpoints: [{addresses: [%s], conditions: {ready: true}}]
ports: %s
`, name, name, ip, ports)
	}
	// policy names its Service, the CA's ConfigMap and what more it asks
	// (SANs, options), as YAML lines under spec.
	policy := func(name, configMap, more string) string {
		return fmt.Sprintf(`---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: %s, namespace: shop}
spec:
  targetRefs: [{group: "", kind: Service, name: %s}]
  validation:
    hostname: %s
    caCertificateRefs: [{group: "", kind: ConfigMap, name: %s}]
%s`, name, name, meshTLSHost, configMap, more)
	}
	configMap := func(name string, pem []byte) string {
		return fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: shop}\ndata:\n  ca.crt: |\n%s\n", name, indent(pem))
	}
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {tlsplane.io/mesh: enabled}}\n")
	b.WriteString(service("echo-v1", meshV1IP, "[{name: http, port: 80, protocol: TCP}, {name: plain, port: 81, protocol: TCP}]"))
	b.WriteString(slice("echo-v1", podV1, "[{name: http, port: 8080, protocol: TCP}, {name: plain, port: 8080, protocol: TCP}]"))
	b.WriteString(service("echo-v2", meshV2IP, "[{name: http, port: 80, protocol: TCP}]"))
	b.WriteString(slice("echo-v2", podV2, "[{name: http, port: 8080, protocol: TCP}]"))
	for _, s := range []struct{ name, ip, ca, more string }{
		{"echo-tls", meshTLSIP, "echo-ca", "    subjectAltNames: [{type: Hostname, hostname: " + meshTLSHost + "}]\n" +
			"  options: {tlsplane.io/maximumVersion: TLSv1_2, tlsplane.io/clientCertificateRef: " + meshClientName + "}\n"},
		{"echo-wrong-ca", meshWrongCAIP, "wrong-ca", ""},
		{"echo-wrong-san", meshWrongSANIP, "echo-ca", "    subjectAltNames: [{type: Hostname, hostname: nobody.example}]\n"},
	} {
		b.WriteString(service(s.name, s.ip, "[{name: https, port: 443, protocol: TCP}]"))
		b.WriteString(slice(s.name, podTLS, "[{name: https, port: 8443, protocol: TCP}]"))
		b.WriteString(policy(s.name, s.ca, s.more))
	}
	b.WriteString(fmt.Sprintf("---\napiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: shop}\ntype: kubernetes.io/tls\ndata: {tls.crt: %s, tls.key: %s}\n",
		meshClientName, base64.StdEncoding.EncodeToString(client.CertPEM), base64.StdEncoding.EncodeToString(client.KeyPEM)))
	b.WriteString(configMap("echo-ca", caPEM))
	b.WriteString(configMap("wrong-ca", wrongCAPEM))
	b.WriteString(`---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: echo-v1, namespace: shop}
spec:
  parentRefs: [{group: "", kind: Service, name: echo-v1, port: 80}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /v2}}]
    backendRefs: [{name: echo-v2, port: 80}]
  - filters:
    - type: RequestHeaderModifier
      requestHeaderModifier: {add: [{name: ` + meshRouteHeader + `, value: ` + meshRouted + `}]}
    backendRefs: [{name: echo-v1, port: 80}]
`)
	return []byte(b.String())
}

// meshEnv is the running Pod: its namespace, sidecar and tlsplane.
type meshEnv struct {
	n                 *netns
	sidecar, tlsplane *harness.Process
	logDir            string
}

func (m *meshEnv) adminURL(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(meshSidecarAdmin) + path
}

// echo is what examples/backend answers.
type echo struct {
	Name       string `json:"name"`
	SNI        string `json:"sni"`
	TLSVersion string `json:"tls_version"`
	// ClientSubject is the client certificate's subject the backend saw.
	ClientSubject string              `json:"client_subject"`
	Host          string              `json:"host"`
	Path          string              `json:"path"`
	Headers       map[string][]string `json:"headers"`
}

func (e echo) header(name string) string {
	for k, v := range e.Headers {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// curl is one request of the application: curl, run as UID 1000 in the
// namespace, knowing nothing of the mesh.
func (m *meshEnv) curl(url string) (echo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", m.n.argv(meshAppUID, "curl", "-sS", "--fail", "--max-time", "5", url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return echo{}, fmt.Errorf("curl %s: %v: %s", url, err, strings.TrimSpace(stderr.String()))
	}
	var e echo
	if err := json.Unmarshal(stdout.Bytes(), &e); err != nil {
		return echo{}, fmt.Errorf("curl %s: %v: %q", url, err, stdout.String())
	}
	return e, nil
}

// await repeats the request until check passes (the sidecar may not have
// its routes yet), bounded by applyTimeout.
func (m *meshEnv) await(t *testing.T, url string, check func(echo) error) echo {
	t.Helper()
	var last echo
	err := harness.Eventually(applyTimeout, 200*time.Millisecond, func() error {
		e, err := m.curl(url)
		if err != nil {
			return err
		}
		last = e
		return check(e)
	})
	if err != nil {
		t.Fatalf("GET %s as UID %d: %v (last answer %+v)\n--- sidecar log:\n%s\n--- tlsplane log:\n%s", url, meshAppUID, err, last, m.sidecar.LogTail(20), m.tlsplane.LogTail(10))
	}
	return last
}

// awaitListener waits until the sidecar holds an xDS listener on addr.
func (m *meshEnv) awaitListener(t *testing.T, addr string) {
	t.Helper()
	err := harness.Eventually(applyTimeout, 200*time.Millisecond, func() error {
		body, err := m.n.get(m.adminURL("/listeners"))
		if err != nil {
			return err
		}
		if !strings.Contains(string(body), "::"+addr) {
			return fmt.Errorf("no listener on %s:\n%s", addr, body)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// stats are the sidecar's counters and gauges.
func (m *meshEnv) stats(t *testing.T) map[string]int64 {
	t.Helper()
	body, err := m.n.get(m.adminURL("/stats"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		if v, err := strconv.ParseInt(value, 10, 64); err == nil {
			out[name] = v
		}
	}
	return out
}

func (m *meshEnv) stat(t *testing.T, name string) int64 {
	t.Helper()
	return m.stats(t)[name]
}

func (m *meshEnv) statSum(t *testing.T, prefix, suffix string) int64 {
	t.Helper()
	return harness.SumStats(m.stats(t), prefix, suffix)
}

// saveConfigDump keeps the sidecar's configuration beside its log.
func (m *meshEnv) saveConfigDump(t *testing.T) {
	body, err := m.n.get(m.adminURL("/config_dump"))
	if err != nil {
		t.Logf("sidecar config_dump: %v", err)
		return
	}
	path := filepath.Join(m.logDir, "sidecar-config_dump.json")
	if err := os.WriteFile(path, body, 0o644); err == nil {
		t.Logf("sidecar configuration: %s", path)
	}
}

// meshPKI is xDS mutual TLS: tlsplane's serving certificate, and
// workload certificates naming a ServiceAccount of shop and of other.
type meshPKI struct {
	caFile                          string
	server, shopClient, otherClient *harness.Leaf
}

func newMeshPKI(t *testing.T, root string) *meshPKI {
	t.Helper()
	dir := filepath.Join(root, "pki")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ca := harness.NewAuthority(t, "mesh e2e xDS CA")
	p := &meshPKI{caFile: filepath.Join(dir, "xds-ca.crt")}
	if err := os.WriteFile(p.caFile, ca.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	p.server = ca.IssueFiles(t, harness.LeafSpec{CommonName: meshXDSName, DNSNames: []string{meshXDSName}},
		filepath.Join(dir, "xds-server.crt"), filepath.Join(dir, "xds-server.key"))
	workload := func(ns string) *harness.Leaf {
		l := ca.IssueFiles(t, harness.LeafSpec{CommonName: "client." + ns, Client: true, URIs: []string{"spiffe://cluster.local/ns/" + ns + "/sa/client"}},
			filepath.Join(dir, ns+"-client.crt"), filepath.Join(dir, ns+"-client.key"))
		// The sidecar runs as its own UID and must read its key.
		for _, f := range []string{l.CertFile, l.KeyFile} {
			if err := os.Chown(f, meshSidecarUID, meshSidecarUID); err != nil {
				t.Fatal(err)
			}
		}
		return l
	}
	p.shopClient, p.otherClient = workload("shop"), workload("other")
	return p
}

// metric is one unlabelled counter of tlsplane's /metrics.
func (m *meshEnv) metric(t *testing.T, name string) int64 {
	t.Helper()
	body, err := m.n.get("http://" + meshAdmin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if value, ok := strings.CutPrefix(line, name+" "); ok {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("%s: %q", name, line)
			}
			return int64(v)
		}
	}
	t.Fatalf("tlsplane's /metrics has no %s", name)
	return 0
}

// processUID is the real UID of pid, from /proc.
func processUID(t *testing.T, pid int) int {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				uid, err := strconv.Atoi(fields[0])
				if err == nil {
					return uid
				}
			}
		}
	}
	t.Fatalf("/proc/%d/status has no Uid line", pid)
	return -1
}
