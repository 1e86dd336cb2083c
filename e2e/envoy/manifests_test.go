package envoy

import (
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// ns is the namespace of every e2e object; cluster names are ns/svc/port.
const ns = "e2e"

// object is one Kubernetes manifest; JSON is YAML, so the directory source
// reads it like any other manifest.
type object map[string]any

// svcPort is a Service port and the backend port its endpoints listen on.
type svcPort struct {
	name        string
	port        int
	backendPort int
}

// clusterName is tlsplane's documented cluster name for a Service port.
func clusterName(svc string, port int) string {
	return ns + "/" + svc + "/" + strconv.Itoa(port)
}

// serviceWithEndpoints is a ClusterIP Service and the EndpointSlice that
// puts every port on 127.0.0.1 at its backend's port.
func serviceWithEndpoints(svc string, ports ...svcPort) []object {
	var sp, ep []object
	for _, p := range ports {
		sp = append(sp, object{"name": p.name, "port": p.port, "targetPort": p.backendPort, "protocol": "TCP"})
		ep = append(ep, object{"name": p.name, "port": p.backendPort, "protocol": "TCP"})
	}
	return []object{
		{
			"apiVersion": "v1", "kind": "Service",
			"metadata": object{"namespace": ns, "name": svc},
			"spec":     object{"type": "ClusterIP", "ports": sp},
		},
		{
			"apiVersion":  "discovery.k8s.io/v1",
			"kind":        "EndpointSlice",
			"metadata":    object{"namespace": ns, "name": svc + "-e2e", "labels": object{"kubernetes.io/service-name": svc}},
			"addressType": "IPv4",
			"endpoints":   []object{{"addresses": []string{"127.0.0.1"}, "conditions": object{"ready": true}}},
			"ports":       ep,
		},
	}
}

func caConfigMap(name string, pemData []byte) object {
	return object{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": object{"namespace": ns, "name": name},
		"data":     object{"ca.crt": string(pemData)},
	}
}

// crlConfigMap holds revocation lists under ca.crl (tlsplane.io/crlRef).
func crlConfigMap(name string, crl []byte) object {
	return object{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": object{"namespace": ns, "name": name},
		"data":     object{"ca.crl": string(crl)},
	}
}

// configMapWithout is a ConfigMap that exists but lacks the ca.crt key.
func configMapWithout(name string, pemData []byte) object {
	return object{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": object{"namespace": ns, "name": name},
		"data":     object{"tls.crt": string(pemData)},
	}
}

func caSecret(name string, pemData []byte) object {
	return object{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": object{"namespace": ns, "name": name},
		"type":     "Opaque",
		"data":     object{"ca.crt": base64.StdEncoding.EncodeToString(pemData)},
	}
}

// target is a policy's targetRef: a Service and optionally a port name.
type target struct{ svc, section string }

// caRef is a caCertificateRefs entry; an empty kind means ConfigMap.
type caRef struct{ group, kind, name string }

// san is a subjectAltNames entry: exactly one of dns and uri is set.
type san struct{ dns, uri string }

// policy is what a scenario says about a BackendTLSPolicy.
type policy struct {
	name      string
	created   time.Time // zero: no creationTimestamp
	targets   []target
	caRefs    []caRef
	wellKnown string
	hostname  string
	sans      []san
	options   map[string]string // keys without the tlsplane.io/ prefix
}

func (p policy) object() object {
	meta := object{"namespace": ns, "name": p.name, "generation": 1}
	if !p.created.IsZero() {
		meta["creationTimestamp"] = p.created.UTC().Format(time.RFC3339)
	}
	var refs []object
	for _, t := range p.targets {
		r := object{"group": "", "kind": "Service", "name": t.svc}
		if t.section != "" {
			r["sectionName"] = t.section
		}
		refs = append(refs, r)
	}
	validation := object{"hostname": p.hostname}
	if len(p.caRefs) > 0 {
		var cas []object
		for _, c := range p.caRefs {
			kind := c.kind
			if kind == "" {
				kind = "ConfigMap"
			}
			cas = append(cas, object{"group": c.group, "kind": kind, "name": c.name})
		}
		validation["caCertificateRefs"] = cas
	}
	if p.wellKnown != "" {
		validation["wellKnownCACertificates"] = p.wellKnown
	}
	if len(p.sans) > 0 {
		var sans []object
		for _, s := range p.sans {
			if s.uri != "" {
				sans = append(sans, object{"type": "URI", "uri": s.uri})
			} else {
				sans = append(sans, object{"type": "Hostname", "hostname": s.dns})
			}
		}
		validation["subjectAltNames"] = sans
	}
	spec := object{"targetRefs": refs, "validation": validation}
	if len(p.options) > 0 {
		opts := object{}
		for k, v := range p.options {
			opts["tlsplane.io/"+k] = v
		}
		spec["options"] = opts
	}
	return object{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
		"metadata": meta, "spec": spec,
	}
}

// writeManifests replaces dir/<file>.yaml with the objects, in one rename,
// so tlsplane never sees half of a scenario.
func writeManifests(t *testing.T, dir, file string, objs ...object) {
	t.Helper()
	var docs []string
	for _, o := range objs {
		b, err := json.MarshalIndent(o, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	harness.WriteAtomic(t, filepath.Join(dir, file+".yaml"), []byte(strings.Join(docs, "\n---\n")+"\n"))
}
