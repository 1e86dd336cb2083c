package dirsource

import (
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlsplane/tlsplane/manifests"
)

const gatewayAPIObjects = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane, uid: u-1, resourceVersion: "7"}
spec: {controllerName: tlsplane.io/controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: shop, uid: u-2, resourceVersion: "7"}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: http, protocol: HTTP, port: 10080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: pay, namespace: shop, uid: u-3, resourceVersion: "7"}
spec:
  parentRefs: [{name: edge}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: checkout, namespace: shop, uid: u-6, resourceVersion: "7"}
spec:
  parentRefs: [{name: edge}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: vault, namespace: shop, uid: u-7, resourceVersion: "7"}
spec:
  parentRefs: [{name: edge}]
  hostnames: [vault.shop.example]
  rules: [{backendRefs: [{name: vault, port: 8443}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: db, namespace: shop, uid: u-8, resourceVersion: "7"}
spec:
  parentRefs: [{name: edge}]
  rules: [{backendRefs: [{name: db, port: 5432}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: team, namespace: shop, uid: u-9, resourceVersion: "7"}
spec:
  parentRef: {name: edge}
  listeners: [{name: extra, port: 8080, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: UDPRoute
metadata: {name: dns, namespace: shop, uid: u-10, resourceVersion: "7"}
spec:
  parentRefs: [{name: edge}]
  rules: [{backendRefs: [{name: dns, port: 53}]}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: routes, namespace: shop, uid: u-4, resourceVersion: "7"}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: default}]
  to: [{group: "", kind: Service}]
---
apiVersion: v1
kind: Namespace
metadata: {name: shop, uid: u-5, resourceVersion: "7"}
`

// A file of Gateway API objects and Namespaces counts as objects: caught
// empty it is read again before they are withdrawn, like any other file,
// and every one of them forgets the resourceVersion the file gave it.
func TestSourceGatewayAPIObjectsAreObjects(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gateway.yaml")
	write(t, path, gatewayAPIObjects)
	logs := &syncBuffer{}
	src, err := New(Options{
		Dir: dir, Parse: manifests.Parser(func(msg string) { t.Errorf("warning: %s", msg) }),
		Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	rescan := func(wantAgain bool, wantObjects int) {
		t.Helper()
		_, again, err := src.rescan(nil)
		if err != nil {
			t.Fatal(err)
		}
		in := src.Inputs()
		if got := count(&in); again != wantAgain || got != wantObjects {
			t.Fatalf("after a read: again=%v, %d objects; want again=%v, %d\nlogs:\n%s", again, got, wantAgain, wantObjects, logs)
		}
	}
	rescan(false, 10)
	in := src.Inputs()
	if len(in.GatewayClasses) != 1 || len(in.Gateways) != 1 || len(in.HTTPRoutes) != 1 || len(in.GRPCRoutes) != 1 ||
		len(in.TLSRoutes) != 1 || len(in.TCPRoutes) != 1 || len(in.ListenerSets) != 1 || len(in.UDPRoutes) != 1 || len(in.ReferenceGrants) != 1 || len(in.Namespaces) != 1 {
		t.Fatalf("read %d classes, %d gateways, %d HTTP routes, %d gRPC routes, %d TLS routes, %d TCP routes, %d listener sets, %d UDP routes, %d grants, %d namespaces; want 1 each",
			len(in.GatewayClasses), len(in.Gateways), len(in.HTTPRoutes), len(in.GRPCRoutes), len(in.TLSRoutes), len(in.TCPRoutes),
			len(in.ListenerSets), len(in.UDPRoutes), len(in.ReferenceGrants), len(in.Namespaces))
	}
	for _, k := range keyedObjects(&in) {
		if o := k.object; o.GetResourceVersion() != "" {
			t.Errorf("%s keeps resourceVersion %q from the file", o.GetName(), o.GetResourceVersion())
		}
	}

	write(t, path, "")
	rescan(true, 10) // an in-place rewrite caught between truncate and write
	write(t, path, gatewayAPIObjects)
	rescan(false, 10)
}

// The directory-mode example reads without a warning into every kind
// it shows.
func TestSourceReadsTheGatewayExample(t *testing.T) {
	src, err := New(Options{
		Dir: "../examples/gateway", Parse: manifests.Parser(func(msg string) { t.Errorf("warning: %s", msg) }),
		Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := src.rescan(nil); err != nil {
		t.Fatal(err)
	}
	in := src.Inputs()
	if len(in.GatewayClasses) != 1 || len(in.Gateways) != 1 || len(in.HTTPRoutes) == 0 || len(in.Policies) != 1 || len(in.Secrets) != 1 {
		t.Fatalf("examples/gateway: %d classes, %d gateways, %d routes, %d policies, %d secrets; want 1, 1, some, 1, 1",
			len(in.GatewayClasses), len(in.Gateways), len(in.HTTPRoutes), len(in.Policies), len(in.Secrets))
	}
	if value(t, src.metrics.failingFiles) != 0 {
		t.Errorf("a file of examples/gateway fails")
	}
}
