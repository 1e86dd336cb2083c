package plan

import "strconv"

// The naming contract: what users route to, what Envoy nodes are served
// as, and what SDS secrets are called. Sources, the snapshot layer and
// Envoy's admin pages all read these names.

// ClusterName is the name users route to: `<namespace>/<service>/<port>`.
func ClusterName(namespace, service string, port int32) string {
	return namespace + "/" + service + "/" + strconv.Itoa(int(port))
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

// GatewayFleet is the fleet (the Envoy node's cluster) that serves a
// Gateway: `<namespace>/<gateway>`.
func GatewayFleet(namespace, gateway string) string {
	return namespace + "/" + gateway
}

// SystemCASecretName is the SDS secret that trusts the Envoy host's system
// bundle (`wellKnownCACertificates: System`).
const SystemCASecretName = "ca/system"

// CertificateSecretName is the SDS secret of a listener certificate held
// in the Secret namespace/name.
func CertificateSecretName(namespace, name string) string {
	return namespace + "/" + name + "/certificate"
}

// ClientCertificateSecretName is the SDS secret of a client certificate
// held in the Secret namespace/name: apart from listener certificates,
// which a fleet of its own is served.
func ClientCertificateSecretName(namespace, name string) string {
	return "client/" + namespace + "/" + name
}

// GatewayClientCertificateSecretName is the SDS secret of the client
// certificate a Gateway presents to its backends: named after the Gateway,
// not the Secret, so pointing the Gateway at another Secret rebuilds no
// cluster, and served only to that Gateway's fleet.
func GatewayClientCertificateSecretName(namespace, gateway string) string {
	return "gateway-client/" + namespace + "/" + gateway
}

// FrontendCASecretName is the SDS secret of the CA bundle a Gateway's
// HTTPS listeners validate client certificates against: scope is
// "default" (spec.tls.frontend.default) or a port (its perPort entry).
// Named after the Gateway, not the ConfigMaps, so pointing it at other
// CAs changes the secret alone, never a listener.
func FrontendCASecretName(namespace, gateway, scope string) string {
	return "frontend-ca/" + namespace + "/" + gateway + "/" + scope
}
