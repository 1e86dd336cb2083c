package translator_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
)

// An HTTPRoute that wins its hostname over a GRPCRoute on one listener
// goes away: the GRPCRoute serves the hostname now. Update must not patch
// only the deleted route's virtual host (the GRPCRoute lost its conflict
// in the last run) but judge the listener's routes again, as Translate
// does.
func TestDeletingTheHTTPRouteAGRPCRouteLostToServesTheGRPCRoute(t *testing.T) {
	in := gatewayInputs(t, gatewayClass+`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  addresses: [{value: 192.0.2.1}]
  listeners: [{name: web, protocol: HTTP, port: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: ns}
spec: {ports: [{port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: ns, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  hostnames: [shared.example]
  rules: [{backendRefs: [{name: app, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: grpc, namespace: ns, creationTimestamp: "2026-01-02T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  hostnames: [shared.example]
  rules: [{backendRefs: [{name: app, port: 8080}]}]`)
	now := time.Now()
	tr := translator.New()
	tr.Translate(in, nil, now, translator.Options{})
	got, ok := tr.Update([]translator.Change{{Kind: translator.KindHTTPRoute, Key: types.NamespacedName{Namespace: "ns", Name: "web"}}}, nil, now, translator.Options{})
	if !ok {
		t.Fatal("Update refused the deletion")
	}
	in.HTTPRoutes = nil
	want := translator.Translate(in, nil, now, translator.Options{})
	if diff := fuzzOutputDifference(want, got); diff != "" {
		t.Fatalf("after deleting HTTPRoute ns/web, Update differs from Translate: %s", diff)
	}
	rc := got.Fleets["ns/gw"]
	if rc == nil || len(rc.Routes) != 1 || len(rc.Routes[0].VirtualHosts) != 1 || rc.Routes[0].VirtualHosts[0].Name != "shared.example" {
		t.Fatalf("fleet ns/gw routes %v, want the GRPCRoute's virtual host shared.example", rc)
	}
}
