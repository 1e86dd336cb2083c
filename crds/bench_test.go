package crds

import (
	"fmt"
	"sync/atomic"
	"testing"

	"sigs.k8s.io/yaml"
)

// benchObjects are one typical object of each kind a generated world
// holds, as directory mode reads them.
var benchObjects = []struct{ kind, doc string }{
	{"HTTPRoute", `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: svc-1, namespace: ns-1}
spec:
  parentRefs: [{name: gw, namespace: infra, sectionName: https}]
  hostnames: [svc-1.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}]
    backendRefs: [{name: svc-1, port: 443}]`},
	{"BackendTLSPolicy", `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: svc-1, namespace: ns-1}
spec:
  targetRefs: [{group: "", kind: Service, name: svc-1}]
  validation:
    hostname: svc-1.ns-1.svc
    caCertificateRefs: [{group: "", kind: ConfigMap, name: svc-1-ca}]`},
	{"Gateway", `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: tlsplane
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - name: https
    port: 443
    protocol: HTTPS
    tls: {certificateRefs: [{name: gw-cert}]}
    allowedRoutes: {namespaces: {from: All}}`},
}

// BenchmarkAdmit is one object's admission, per channel and kind: decode
// from JSON included, as directory mode pays it.
func BenchmarkAdmit(b *testing.B) {
	for _, channel := range Channels {
		v, err := Load(channel)
		if err != nil {
			b.Fatal(err)
		}
		for _, bo := range benchObjects {
			data, err := yaml.YAMLToJSON([]byte(bo.doc))
			if err != nil {
				b.Fatal(err)
			}
			b.Run(channel+"/"+bo.kind, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					obj, err := Decode(data)
					if err != nil {
						b.Fatal(err)
					}
					if errs, _, err := v.Admit(obj); err != nil || len(errs) > 0 {
						b.Fatal(err, errs)
					}
				}
			})
		}
	}
}

// BenchmarkLoad is building a channel's Validator, which Load pays once
// per process.
func BenchmarkLoad(b *testing.B) {
	for _, channel := range Channels {
		b.Run(channel, func(b *testing.B) {
			for b.Loop() {
				v, err := build(channel)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := v.compiledVersions(); err != nil { // every version, as a directory of every kind needs
					b.Fatal(err)
				}
			}
		})
	}
}

// worldNames numbers BenchmarkAdmitWorld's Services across its runs, so
// that no run meets another's objects in the memo.
var worldNames atomic.Int64

// BenchmarkAdmitWorld is one Service's Gateway API objects of perf/world
// (its HTTPRoute and BackendTLSPolicy), each iteration of other names, as
// a directory of 10,000 Services holds them: what they share (parentRefs,
// matches, targetRefs' kinds) the CEL memo answers, what is each one's
// own it does not.
func BenchmarkAdmitWorld(b *testing.B) {
	v, err := Load(Experimental)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		i := int(worldNames.Add(1))
		for _, doc := range []string{
			fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"svc-%[1]d","namespace":"ns-%[2]d"},"spec":{"parentRefs":[{"name":"web","namespace":"edge"}],"hostnames":["svc-%[1]d.shop.example"],"rules":[{"matches":[{"path":{"type":"PathPrefix","value":"/"}}],"backendRefs":[{"name":"svc-%[1]d","port":443}]}]}}`, i, i%100),
			fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"BackendTLSPolicy","metadata":{"name":"svc-%[1]d-tls","namespace":"ns-%[2]d"},"spec":{"targetRefs":[{"group":"","kind":"Service","name":"svc-%[1]d"}],"validation":{"hostname":"svc-%[1]d.ns-%[2]d.svc.cluster.local","caCertificateRefs":[{"group":"","kind":"ConfigMap","name":"svc-%[1]d-ca"}]}}}`, i, i%100),
		} {
			obj, err := Decode([]byte(doc))
			if err != nil {
				b.Fatal(err)
			}
			if errs, _, err := v.Admit(obj); err != nil || len(errs) > 0 {
				b.Fatal(err, errs)
			}
		}
	}
}
