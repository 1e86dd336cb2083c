package envoy

import (
	"fmt"
	"testing"
)

// Edits an operator makes every day: endpoints move, a policy changes, a
// pod is not ready. Each must reach Envoy without disturbing the rest.

// endpointsMove: a new EndpointSlice port reaches Envoy as an EDS update;
// the cluster itself is not rebuilt.
func endpointsMove(t *testing.T, e *env, p *pki, b *backends, s *summary) {
	const svc = "endpoints-move"
	cluster := clusterName(svc, svcPortNumber)
	pol := policy{name: svc, targets: []target{{svc: svc}}, caRefs: []caRef{{name: "ca-" + svc}}, hostname: hostAbc}
	write := func(be *backend) {
		objs := serviceWithEndpoints(svc, svcPort{name: "https", port: svcPortNumber, backendPort: be.port})
		writeManifests(t, e.manifestDir, svc, append(objs, caConfigMap("ca-"+svc, p.ca.PEM), pol.object())...)
	}
	write(b.main)
	before := e.waitCluster(t, cluster, activeTLS(hostAbc, b.main.port))
	if r := e.request(t, cluster, "/before-move"); r.Status != 200 || r.Echo.Name != b.main.name {
		t.Fatalf("before the move: want 200 from %s, got %s", b.main.name, r)
	}
	write(b.tls12)
	after := e.waitCluster(t, cluster, func(v clusterView) error {
		if len(v.hostPorts) != 1 || v.hostPorts[0] != b.tls12.port {
			return fmt.Errorf("endpoints %v, want only port %d", v.hostPorts, b.tls12.port)
		}
		return activeTLS(hostAbc, b.tls12.port)(v)
	})
	r := e.request(t, cluster, "/after-move")
	s.note("endpoints-move-without-cluster-rebuild", "%s", r)
	if r.Status != 200 || r.Echo.Name != b.tls12.name {
		t.Errorf("after the move: want 200 from %s, got %s", b.tls12.name, r)
	}
	if after.raw != before.raw {
		t.Errorf("the cluster was rebuilt for an endpoint change:\nbefore %s\nafter  %s", before.raw, after.raw)
	}
}

// policyEdit: a new hostname in the policy is the SNI of the next request.
func policyEdit(t *testing.T, e *env, p *pki, b *backends, s *summary) {
	const svc = "policy-edit"
	cluster := clusterName(svc, svcPortNumber)
	write := func(hostname string) {
		pol := policy{name: svc, targets: []target{{svc: svc}}, caRefs: []caRef{{name: "ca-" + svc}}, hostname: hostname}
		objs := serviceWithEndpoints(svc, svcPort{name: "https", port: svcPortNumber, backendPort: b.main.port})
		writeManifests(t, e.manifestDir, svc, append(objs, caConfigMap("ca-"+svc, p.ca.PEM), pol.object())...)
	}
	write(hostAbc)
	e.waitCluster(t, cluster, activeTLS(hostAbc, b.main.port))
	if r := e.request(t, cluster, "/before-edit"); r.Status != 200 || r.Echo.SNI != hostAbc {
		t.Fatalf("before the edit: want 200 with SNI %q, got %s", hostAbc, r)
	}
	write(hostOther)
	e.waitCluster(t, cluster, activeTLS(hostOther, b.main.port))
	r := e.request(t, cluster, "/after-edit")
	s.note("policy-edit-changes-sni", "%s", r)
	if r.Status != 200 || r.Echo.SNI != hostOther {
		t.Errorf("after the edit: want 200 with SNI %q, got %s", hostOther, r)
	}
}

// unreadyEndpoint: an endpoint that is not ready gets no request, even
// though its slice is right next to a ready one.
func unreadyEndpoint(t *testing.T, e *env, p *pki, b *backends, s *summary) {
	const svc = "unready-endpoint"
	cluster := clusterName(svc, svcPortNumber)
	objs := serviceWithEndpoints(svc, svcPort{name: "https", port: svcPortNumber, backendPort: b.main.port})
	unready := object{
		"apiVersion":  "discovery.k8s.io/v1",
		"kind":        "EndpointSlice",
		"metadata":    object{"namespace": ns, "name": svc + "-unready", "labels": object{"kubernetes.io/service-name": svc}},
		"addressType": "IPv4",
		"endpoints":   []object{{"addresses": []string{"127.0.0.1"}, "conditions": object{"ready": false}}},
		"ports":       []object{{"name": "https", "port": b.sentinel.port, "protocol": "TCP"}},
	}
	pol := policy{name: svc, targets: []target{{svc: svc}}, caRefs: []caRef{{name: "ca-" + svc}}, hostname: hostAbc}
	writeManifests(t, e.manifestDir, svc, append(objs, unready, caConfigMap("ca-"+svc, p.ca.PEM), pol.object())...)
	view := e.waitCluster(t, cluster, activeTLS(hostAbc, b.main.port))
	if hasPort(view.hostPorts, b.sentinel.port) {
		t.Errorf("Envoy has the unready endpoint: %v", view.hostPorts)
	}
	before := b.sentinel.counts(t)
	const n = 5
	for i := 0; i < n; i++ {
		if r := e.request(t, cluster, "/unready"); r.Status != 200 || r.Echo.Name != b.main.name {
			t.Errorf("request %d: want 200 from %s, got %s", i, b.main.name, r)
		}
	}
	after := b.sentinel.counts(t)
	s.note("unready-endpoint-gets-no-traffic", "%d requests, endpoints %v", n, view.hostPorts)
	if after.Requests != before.Requests || after.Handshakes > before.Handshakes+1 {
		t.Errorf("the unready endpoint got traffic: before %+v, after %+v", before, after)
	}
}
