// Package world writes the manifests of the generated world that tlsplane's
// scale tests and measurements read (cmd/tlsplane's writeGeneratedManifest,
// e2e/perf's BenchmarkServeStart): what `helm template` renders for n
// policy-targeted Services behind one Gateway. It imports only the
// standard library, so both modules use it without new requirements.
package world

import (
	"fmt"
	"io"
	"strings"
)

// WriteGatewayManifest writes the head of the generated world's manifests
// (WriteServices has the rest): a GatewayClass and the Gateway
// edge/web every Service's HTTPRoute attaches to, each document under
// helm's `# Source:` comment, as `helm template` or a GitOps tool renders.
func WriteGateway(w io.Writer) error {
	_, err := io.WriteString(w, `---
# Source: shop/templates/gateway.yaml
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: tlsplane
spec:
  controllerName: tlsplane.io/controller
---
# Source: shop/templates/gateway.yaml
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: web
  namespace: edge
spec:
  gatewayClassName: tlsplane
  listeners:
  - name: http
    protocol: HTTP
    port: 8080
    allowedRoutes:
      namespaces:
        from: All
`)
	return err
}

// WriteServiceManifests writes Services from to to-1 of the generated
// world (in 50 namespaces): each one's Service, CA ConfigMap (caPEM, a
// P-256 CA as cert-manager issues), BackendTLSPolicy, EndpointSlice of
// two addresses and HTTPRoute behind edge/web. endpointPort is the
// EndpointSlice's port (8443 in the world as generated): an edit that
// moves it is one changed load assignment.
func WriteServices(w io.Writer, from, to int, caPEM string, endpointPort int) error {
	var ca strings.Builder
	for _, line := range strings.Split(strings.TrimRight(caPEM, "\n"), "\n") {
		ca.WriteString("    " + line + "\n")
	}
	for i := from; i < to; i++ {
		ns, name := fmt.Sprintf("team-%d", i%50), fmt.Sprintf("svc-%d", i)
		if _, err := fmt.Fprintf(w, `---
# Source: shop/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: %[2]s
  namespace: %[1]s
  labels:
    app.kubernetes.io/name: %[2]s
    app.kubernetes.io/managed-by: Helm
spec:
  ports:
  - name: https
    port: 443
    targetPort: 8443
---
# Source: shop/templates/ca.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: %[2]s-ca
  namespace: %[1]s
data:
  ca.crt: |
%[3]s---
# Source: shop/templates/backendtlspolicy.yaml
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata:
  name: %[2]s-tls
  namespace: %[1]s
spec:
  targetRefs:
  - group: ""
    kind: Service
    name: %[2]s
  validation:
    hostname: %[2]s.%[1]s.svc.cluster.local
    caCertificateRefs:
    - group: ""
      kind: ConfigMap
      name: %[2]s-ca
---
# Source: shop/templates/endpointslice.yaml
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %[2]s-x
  namespace: %[1]s
  labels:
    kubernetes.io/service-name: %[2]s
addressType: IPv4
ports:
- name: https
  port: %[6]d
endpoints:
- addresses: ["10.%[4]d.%[5]d.10"]
- addresses: ["10.%[4]d.%[5]d.11"]
---
# Source: shop/templates/httproute.yaml
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: %[2]s
  namespace: %[1]s
spec:
  parentRefs:
  - name: web
    namespace: edge
  hostnames:
  - %[2]s.shop.example
  rules:
  - matches:
    - path:
        type: PathPrefix
        value: /
    backendRefs:
    - name: %[2]s
      port: 443
`, ns, name, ca.String(), i/250%250, i%250, endpointPort); err != nil {
			return err
		}
	}
	return nil
}
