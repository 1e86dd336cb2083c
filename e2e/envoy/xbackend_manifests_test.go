package envoy

// XBackend manifests (GEP-4894, gateway.networking.x-k8s.io/v1alpha1), as
// an operator writes them, and routes whose backendRefs name them.

const (
	xbAPIVersion = "gateway.networking.x-k8s.io/v1alpha1"
	xbGroup      = "gateway.networking.x-k8s.io"
)

// xbackend is one XBackend of type ExternalHostname; tls nil leaves
// spec.tls out, protocol "" leaves spec.protocol out.
type xbackend struct {
	name, hostname string
	port           int
	protocol       string
	tls            *xbTLS
	annotations    map[string]string // tlsplane.io/ options, e.g. a profile
}

// xbTLS is spec.tls; noValidation leaves spec.tls.validation out (System
// trust, SNI and SAN the external hostname).
type xbTLS struct {
	mode         string
	caRefs       []string // ConfigMaps of the XBackend's namespace
	hostname     string   // validation.hostname; "": the external hostname
	sans         []string // validation.subjectAltNames, type Hostname
	clientSecret string   // clientCertificateRef
	noValidation bool
}

func (x xbackend) object(namespace string) object {
	spec := object{
		"type":             "ExternalHostname",
		"externalHostname": object{"hostname": x.hostname},
		"port":             object{"port": x.port},
	}
	if x.protocol != "" {
		spec["protocol"] = x.protocol
	}
	if x.tls != nil {
		tls := object{"mode": x.tls.mode}
		if !x.tls.noValidation && x.tls.mode != "None" {
			v := object{}
			var refs []object
			for _, name := range x.tls.caRefs {
				refs = append(refs, object{"group": "", "kind": "ConfigMap", "name": name})
			}
			if len(refs) > 0 {
				v["caCertificateRefs"] = refs
			}
			// The CRD requires validation.hostname; a case that does not
			// name one checks the external hostname.
			v["hostname"] = x.hostname
			if x.tls.hostname != "" {
				v["hostname"] = x.tls.hostname
			}
			var sans []object
			for _, h := range x.tls.sans {
				sans = append(sans, object{"type": "Hostname", "hostname": h})
			}
			if len(sans) > 0 {
				v["subjectAltNames"] = sans
			}
			tls["validation"] = v
		}
		if x.tls.clientSecret != "" {
			tls["clientCertificateRef"] = object{"group": "", "kind": "Secret", "name": x.tls.clientSecret}
		}
		spec["tls"] = tls
	}
	meta := object{"namespace": namespace, "name": x.name, "generation": 1}
	if len(x.annotations) > 0 {
		meta["annotations"] = x.annotations
	}
	return object{
		"apiVersion": xbAPIVersion, "kind": "XBackend",
		"metadata": meta,
		"spec":     spec,
	}
}

// xbRef is a backendRef to an XBackend of the route's namespace, with
// its port.
func xbRef(name string, port int) object {
	return object{"group": xbGroup, "kind": "XBackend", "name": name, "port": port}
}

// xbRoute is an HTTPRoute, GRPCRoute, TLSRoute or TCPRoute of one
// listener (sectionName) whose one rule sends to one XBackend.
func xbRoute(kind, namespace, name, gw, section string, hostnames []string, ref object) object {
	spec := object{
		"parentRefs": []object{{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": gw, "sectionName": section}},
		"rules":      []object{{"backendRefs": []object{ref}}},
	}
	if len(hostnames) > 0 {
		spec["hostnames"] = hostnames
	}
	return object{
		"apiVersion": gatewayAPIVersion, "kind": kind,
		"metadata": object{"namespace": namespace, "name": name, "generation": 1},
		"spec":     spec,
	}
}

// caConfigMapIn is a ConfigMap of namespace holding a CA bundle (ca.crt).
func caConfigMapIn(namespace, name string, pemData []byte) object {
	return object{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": object{"namespace": namespace, "name": name},
		"data":     object{"ca.crt": string(pemData)},
	}
}
