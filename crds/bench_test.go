package crds

import (
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
				if _, err := build(channel); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
