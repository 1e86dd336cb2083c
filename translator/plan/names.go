package plan

import (
	"slices"
	"strconv"
	"strings"
)

// The naming contract: what users route to, what Envoy nodes are served
// as, and what SDS secrets are called. Sources, the snapshot layer and
// Envoy's admin pages all read these names.
//
// Every name is an injective function of what it stands for, so no two
// objects, of one kind or of two, ever share a name Envoy (or a map of
// ours) keys by. By construction: each part taken from an object passes
// through segment, which never yields a separator ('/', ',', '+', '~')
// nor an upper-case letter; each kind has a fixed number of parts, and
// kinds that share a namespace differ in their fixed parts. Names of
// legal Kubernetes objects pass segment unchanged.
//
// Clusters, their load assignments and SDS secrets share one namespace
// (the publisher's Origins map): clusters are `<namespace>/<service>/<port>`
// with an optional fixed fourth part; every secret starts with its kind in
// upper case, which no namespace is (not with a ':': Envoy's stats turn
// it into '_'). Listeners, route configurations, filter chains of a
// listener, virtual hosts of a route configuration and routes of a
// virtual host are each a namespace of their own. Virtual hosts are named
// after their hostname, as Envoy matches it (package envoy: the 421 one
// is "~misdirected", '~' being no hostname character).

// segment is s with '%', the separators above, upper-case letters and
// every byte outside printable ASCII written %XX: injective, and the
// identity on the names Kubernetes allows (DNS labels and subdomains),
// hostnames included.
func segment(s string) string { return escape(s, "") }

// escape is segment, also escaping the bytes of extra.
func escape(s, extra string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		clean = !mustEscape(s[i], extra)
	}
	if clean {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; mustEscape(c, extra) {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func mustEscape(c byte, extra string) bool {
	return c <= ' ' || c >= 0x7f || ('A' <= c && c <= 'Z') || strings.IndexByte("%/,+~", c) >= 0 || strings.IndexByte(extra, c) >= 0
}

// ClusterName is the name users route to: `<namespace>/<service>/<port>`.
func ClusterName(namespace, service string, port int32) string {
	return segment(namespace) + "/" + segment(service) + "/" + strconv.Itoa(int(port))
}

// GRPCClusterName is the cluster GRPCRoutes send a Service port's traffic
// to: beside ClusterName's, reading the same endpoints, it speaks HTTP/2
// whatever the port's appProtocol or its policy's ALPN (gRPC needs it;
// HTTPRoutes to the same port keep theirs).
func GRPCClusterName(namespace, service string, port int32) string {
	return ClusterName(namespace, service, port) + "/grpc"
}

// RawClusterName is the cluster TLSRoutes in Passthrough and TCPRoutes
// send a Service port's connections to: beside ClusterName's, reading the
// same endpoints, with no TLS of its own (a BackendTLSPolicy applies to
// TLS that the Gateway terminates, never to a client's passed through).
func RawClusterName(namespace, service string, port int32) string {
	return RawOf(ClusterName(namespace, service, port))
}

// RawOf is the raw cluster beside the port's cluster named cluster.
func RawOf(cluster string) string { return cluster + "/tcp" }

// UDPClusterName is the cluster UDPRoutes send a Service's UDP port's
// datagrams to: the port's only cluster (a UDP port gets none of its own,
// no BackendTLSPolicy applying to UDP), reading the UDP port's endpoints.
func UDPClusterName(namespace, service string, port int32) string {
	return ClusterName(namespace, service, port) + "/udp"
}

// XBackendClusterName is the cluster HTTPRoutes send an XBackend's
// traffic to: `XBackend/<namespace>/<name>/<port>`. `XBackend` is upper
// case, so no namespace (and no secret kind) is; GRPCRoutes' is
// `+"/grpc"`, stream routes' RawOf it.
func XBackendClusterName(namespace, name string, port int32) string {
	return "XBackend/" + ClusterName(namespace, name, port)
}

// XBackendGRPCClusterName is the XBackend's cluster for GRPCRoutes
// (HTTP/2 whatever its protocol says of HTTP).
func XBackendGRPCClusterName(namespace, name string, port int32) string {
	return XBackendClusterName(namespace, name, port) + "/grpc"
}

// InvalidBackendClusterName is the cluster no cluster is: a route's share
// sent to an invalid backend goes there and is refused. No '/', which
// every other cluster's name holds.
const InvalidBackendClusterName = "tlsplane.invalid-backend"

// GatewayFleet is the fleet (the Envoy node's cluster) that serves a
// Gateway: `<namespace>/<gateway>`.
func GatewayFleet(namespace, gateway string) string {
	return segment(namespace) + "/" + segment(gateway)
}

// ListenerName is the Envoy listener of a Gateway's TCP port:
// `<namespace>/<gateway>/<port>`; the route configuration of its HTTP
// listeners has the same name.
func ListenerName(namespace, gateway string, port int32) string {
	return GatewayFleet(namespace, gateway) + "/" + strconv.Itoa(int(port))
}

// UDPListenerName is the Envoy listener of a Gateway's UDP port: apart
// from the TCP port of the same number.
func UDPListenerName(namespace, gateway string, port int32) string {
	return ListenerName(namespace, gateway, port) + "/udp"
}

// GatewayChainName is the filter chain of a Gateway's listener (its
// sectionName) on the listener's port.
func GatewayChainName(listener string) string { return segment(listener) }

// ListenerSetChainName is the filter chain of a ListenerSet's listener:
// `<namespace>/<set>/<listener>`, apart from every Gateway listener's.
func ListenerSetChainName(namespace, set, listener string) string {
	return segment(namespace) + "/" + segment(set) + "/" + segment(listener)
}

// StreamChainName is the filter chain of a TLS listener (chain, as
// GatewayChainName or ListenerSetChainName make it) for one SNI hostname.
func StreamChainName(chain, hostname string) string { return chain + "/" + segment(hostname) }

// UnmatchedChainName is the filter chain refusing the connections no
// listener of a port takes: '~' is in no listener's chain name.
const UnmatchedChainName = "~unmatched"

// ChainRouteTableName is the route configuration of an HTTPS listener's
// filter chain on the Envoy listener named listener.
func ChainRouteTableName(listener, chain string) string { return listener + "/" + chain }

// HTTPRouteMatchName is the route of match j of rule i of an HTTPRoute:
// `<namespace>/<route>/rule/<i>/match/<j>`.
func HTTPRouteMatchName(namespace, route string, rule, match int) string {
	return routeMatchName(namespace, route, "rule", rule, match)
}

// GRPCRouteMatchName is HTTPRouteMatchName for a GRPCRoute: `grpcrule`
// sets it apart from an HTTPRoute's of the same name.
func GRPCRouteMatchName(namespace, route string, rule, match int) string {
	return routeMatchName(namespace, route, "grpcrule", rule, match)
}

func routeMatchName(namespace, route, kind string, rule, match int) string {
	return segment(namespace) + "/" + segment(route) + "/" + kind + "/" + strconv.Itoa(rule) + "/match/" + strconv.Itoa(match)
}

// SystemCASecretName is the SDS secret that trusts the Envoy host's system
// bundle (`wellKnownCACertificates: System`).
const SystemCASecretName = "CA/system"

// CertificateSecretName is the SDS secret of a listener certificate held
// in the Secret namespace/name: `Certificate/<namespace>/<name>`.
func CertificateSecretName(namespace, name string) string {
	return "Certificate/" + segment(namespace) + "/" + segment(name)
}

// ClientCertificateSecretName is the SDS secret of a client certificate
// held in the Secret namespace/name (`Client/<namespace>/<name>`): apart
// from listener certificates, which a fleet of its own is served.
func ClientCertificateSecretName(namespace, name string) string {
	return "Client/" + segment(namespace) + "/" + segment(name)
}

// GatewayClientCertificateSecretName is the SDS secret of the client
// certificate a Gateway presents to its backends
// (`GatewayClient/<namespace>/<gateway>`): named after the Gateway,
// not the Secret, so pointing the Gateway at another Secret rebuilds no
// cluster, and served only to that Gateway's fleet.
func GatewayClientCertificateSecretName(namespace, gateway string) string {
	return "GatewayClient/" + segment(namespace) + "/" + segment(gateway)
}

// FrontendCASecretName is the SDS secret of the CA bundle a Gateway's
// HTTPS listeners validate client certificates against
// (`FrontendCA/<namespace>/<gateway>/<scope>`): scope is
// "default" (spec.tls.frontend.default) or a port (its perPort entry).
// Named after the Gateway, not the ConfigMaps, so pointing it at other
// CAs changes the secret alone, never a listener.
func FrontendCASecretName(namespace, gateway, scope string) string {
	return "FrontendCA/" + segment(namespace) + "/" + segment(gateway) + "/" + segment(scope)
}

// CARef is one CA (or revocation list) reference of a policy, as its CA
// bundle's name spells it: `<namespace>/configmap/<name>`,
// `<namespace>/secret/<name>`, or for any other kind (refused, but
// named all the same) `<kind>.<group>` in the middle.
func CARef(namespace, group, kind, name string) string {
	k := escape(kind, ".") + "." + segment(group) // a '.' only after the kind
	if group == "" && (kind == "ConfigMap" || kind == "Secret") {
		k = strings.ToLower(kind)
	}
	return segment(namespace) + "/" + k + "/" + segment(name)
}

// CASecretName is the SDS secret of the CA bundle a policy's refs (CARef
// of each, valid or not) name: `CA/` and the refs sorted, without
// duplicates, joined by commas. Equal sets of refs share one secret.
func CASecretName(refs []string) string {
	sorted := append([]string(nil), refs...)
	slices.Sort(sorted)
	return "CA/" + strings.Join(slices.Compact(sorted), ",")
}

// CRLSecretName is the CA secret's name with the revocation list's source
// (a CARef): a policy adding a list to a bundle others trust gets a secret
// of its own.
func CRLSecretName(caSecret, crlRef string) string {
	return caSecret + "+crl/" + crlRef
}
