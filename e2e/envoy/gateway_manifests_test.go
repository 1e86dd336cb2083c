package envoy

import (
	"encoding/base64"
	"strconv"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// Gateway API manifests, as an operator writes them; JSON is YAML, so the
// directory source reads them like any other manifest.

const gatewayAPIVersion = "gateway.networking.k8s.io/v1"

// inNamespace moves objects (Services, EndpointSlices, ConfigMaps,
// policies built for ns) into namespace.
func inNamespace(namespace string, objs ...object) []object {
	for _, o := range objs {
		o["metadata"].(object)["namespace"] = namespace
	}
	return objs
}

// clusterIn is tlsplane's cluster name for a Service port of any namespace.
func clusterIn(namespace, svc string, port int) string {
	return namespace + "/" + svc + "/" + strconv.Itoa(port)
}

func gatewayClass(name, controller string) object {
	return object{
		"apiVersion": gatewayAPIVersion, "kind": "GatewayClass",
		"metadata": object{"name": name, "generation": 1},
		"spec":     object{"controllerName": controller},
	}
}

// gwListener is a Gateway listener; certNS is empty for a certificate in
// the Gateway's namespace.
type gwListener struct {
	name, protocol, hostname string
	port                     int
	certNS, certName         string
	passthrough              bool // a TLS listener in Passthrough mode
}

func (l gwListener) object() object {
	o := object{"name": l.name, "protocol": l.protocol, "port": l.port}
	if l.hostname != "" {
		o["hostname"] = l.hostname
	}
	if l.certName != "" {
		ref := object{"group": "", "kind": "Secret", "name": l.certName}
		if l.certNS != "" {
			ref["namespace"] = l.certNS
		}
		o["tls"] = object{"mode": "Terminate", "certificateRefs": []object{ref}}
	}
	if l.passthrough {
		o["tls"] = object{"mode": "Passthrough"}
	}
	return o
}

func gateway(namespace, name, class string, listeners ...gwListener) object {
	var ls []object
	for _, l := range listeners {
		ls = append(ls, l.object())
	}
	return object{
		"apiVersion": gatewayAPIVersion, "kind": "Gateway",
		"metadata": object{"namespace": namespace, "name": name, "generation": 1},
		"spec":     object{"gatewayClassName": class, "listeners": ls},
	}
}

// backendRef is an HTTPRoute backendRef to a Service port; namespace is
// empty for the route's own, weight 0 for the default (1).
type backendRef struct {
	namespace, name string
	port, weight    int
}

// pathMatch is one match of a rule: "PathPrefix" or "Exact".
type pathMatch struct{ kind, value string }

// routeRule is one HTTPRoute rule; no matches means every path.
type routeRule struct {
	matches  []pathMatch
	filters  []object
	backends []backendRef
	// retry and timeouts are the rule's stanzas as written; nil: none.
	retry, timeouts object
}

// httpRoute attaches to one listener (sectionName) of one Gateway.
type httpRoute struct {
	namespace, name string
	gateway         string // in the route's namespace
	section         string
	hostnames       []string
	rules           []routeRule
}

func (r httpRoute) object() object {
	var rules []object
	for _, rule := range r.rules {
		o := object{}
		var matches []object
		for _, m := range rule.matches {
			matches = append(matches, object{"path": object{"type": m.kind, "value": m.value}})
		}
		if len(matches) > 0 {
			o["matches"] = matches
		}
		if len(rule.filters) > 0 {
			o["filters"] = rule.filters
		}
		if rule.retry != nil {
			o["retry"] = rule.retry
		}
		if rule.timeouts != nil {
			o["timeouts"] = rule.timeouts
		}
		var refs []object
		for _, b := range rule.backends {
			ref := object{"group": "", "kind": "Service", "name": b.name, "port": b.port}
			if b.namespace != "" {
				ref["namespace"] = b.namespace
			}
			if b.weight != 0 {
				ref["weight"] = b.weight
			}
			refs = append(refs, ref)
		}
		o["backendRefs"] = refs
		rules = append(rules, o)
	}
	spec := object{
		"parentRefs": []object{{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": r.gateway, "sectionName": r.section}},
		"rules":      rules,
	}
	if len(r.hostnames) > 0 {
		spec["hostnames"] = r.hostnames
	}
	return object{
		"apiVersion": gatewayAPIVersion, "kind": "HTTPRoute",
		"metadata": object{"namespace": r.namespace, "name": r.name, "generation": 1},
		"spec":     spec,
	}
}

// headerModifier is a RequestHeaderModifier filter.
func headerModifier(add, set map[string]string, remove ...string) object {
	pairs := func(m map[string]string) []object {
		var out []object
		for k, v := range m {
			out = append(out, object{"name": k, "value": v})
		}
		return out
	}
	m := object{}
	if len(add) > 0 {
		m["add"] = pairs(add)
	}
	if len(set) > 0 {
		m["set"] = pairs(set)
	}
	if len(remove) > 0 {
		m["remove"] = remove
	}
	return object{"type": "RequestHeaderModifier", "requestHeaderModifier": m}
}

// referenceGrant lets fromKind objects of fromNS refer to toKind objects
// of namespace; version is "v1" or "v1beta1" (both are served).
func referenceGrant(version, namespace, name, fromKind, fromNS, toKind string) object {
	return object{
		"apiVersion": "gateway.networking.k8s.io/" + version, "kind": "ReferenceGrant",
		"metadata": object{"namespace": namespace, "name": name},
		"spec": object{
			"from": []object{{"group": "gateway.networking.k8s.io", "kind": fromKind, "namespace": fromNS}},
			"to":   []object{{"group": "", "kind": toKind}},
		},
	}
}

// tlsSecret is a kubernetes.io/tls Secret holding a listener certificate.
func tlsSecret(namespace, name string, leaf *harness.Leaf) object {
	return object{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": object{"namespace": namespace, "name": name},
		"type":     "kubernetes.io/tls",
		"data": object{
			"tls.crt": base64.StdEncoding.EncodeToString(leaf.CertPEM),
			"tls.key": base64.StdEncoding.EncodeToString(leaf.KeyPEM),
		},
	}
}
