package faults

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// ns is the namespace of every object; cluster names are ns/svc/port.
const (
	ns      = "faults"
	svcPort = 443
)

type object map[string]any

func clusterName(svc string) string { return ns + "/" + svc + "/" + strconv.Itoa(svcPort) }

// backendObjects is a Service whose endpoint is the backend on 127.0.0.1,
// the CA ConfigMap, and a BackendTLSPolicy with hostname as SNI that
// verifies the backend's certificate by hostMain.
func backendObjects(svc string, backendPort int, caPEM []byte, hostname string) []object {
	return []object{
		{
			"apiVersion": "v1", "kind": "Service",
			"metadata": object{"namespace": ns, "name": svc},
			"spec":     object{"type": "ClusterIP", "ports": []object{{"name": "https", "port": svcPort, "targetPort": backendPort, "protocol": "TCP"}}},
		},
		{
			"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
			"metadata":    object{"namespace": ns, "name": svc + "-1", "labels": object{"kubernetes.io/service-name": svc}},
			"addressType": "IPv4",
			"endpoints":   []object{{"addresses": []string{"127.0.0.1"}, "conditions": object{"ready": true}}},
			"ports":       []object{{"name": "https", "port": backendPort, "protocol": "TCP"}},
		},
		{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": object{"namespace": ns, "name": svc + "-ca"},
			"data":     object{"ca.crt": string(caPEM)},
		},
		{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
			"metadata": object{"namespace": ns, "name": svc + "-tls", "generation": 1},
			"spec": object{
				"targetRefs": []object{{"group": "", "kind": "Service", "name": svc}},
				"validation": object{
					"hostname":          hostname,
					"caCertificateRefs": []object{{"group": "", "kind": "ConfigMap", "name": svc + "-ca"}},
					"subjectAltNames":   []object{{"type": "Hostname", "hostname": hostMain}},
				},
			},
		},
	}
}

// manifest is the objects as JSON documents, which the YAML reader reads.
func manifest(t *testing.T, objs []object) []byte {
	t.Helper()
	var docs []string
	for _, o := range objs {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	return []byte(strings.Join(docs, "\n---\n") + "\n")
}
