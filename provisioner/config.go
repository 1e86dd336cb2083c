package provisioner

import (
	"fmt"
	"net"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tlsplane/tlsplane/translator/infrastructure"
)

// DefaultImage is the Envoy the provisioned Deployments run.
const DefaultImage = "envoyproxy/envoy:v1.40-latest"

// GatewayPlaceholder is replaced by the Gateway's name in
// Config.XDSClientSecret, so each Gateway's Envoys can hold a certificate
// of their own fleet.
const GatewayPlaceholder = "{gateway}"

// Config is what every provisioned Gateway shares.
type Config struct {
	// Image is the Envoy image of the Deployments.
	Image string
	// XDSAddress is host:port of tlsplane's xDS Service, as the Envoys
	// dial it.
	XDSAddress string
	// ServiceType is the type of the Gateway's Service.
	ServiceType corev1.ServiceType
	// XDSClientSecret, when set, turns on mutual TLS towards tlsplane: the
	// Secret of that name (GatewayPlaceholder replaced) in the Gateway's
	// namespace holds the Envoys' client certificate (tls.crt, tls.key)
	// and the CA of tlsplane's server certificate (ca.crt).
	XDSClientSecret string
	// Infrastructure says in which namespaces Gateways are provisioned and
	// which spec.infrastructure keys are copied; the translator reports
	// the same judgement on each Gateway's status. Required.
	Infrastructure *infrastructure.Policy
}

// Check reports the first unusable field, naming its flag.
func (c Config) Check() error {
	if c.Image == "" {
		return fmt.Errorf("--gateway-envoy-image: empty")
	}
	host, port, err := net.SplitHostPort(c.XDSAddress)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("--gateway-xds-address %q: want host:port of tlsplane's xDS Service, as the provisioned Envoys reach it", c.XDSAddress)
	}
	switch c.ServiceType {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort, corev1.ServiceTypeClusterIP:
	default:
		return fmt.Errorf("--gateway-service-type %q: want LoadBalancer, NodePort or ClusterIP", c.ServiceType)
	}
	if s := strings.ReplaceAll(c.XDSClientSecret, GatewayPlaceholder, "x"); s != "" && strings.ContainsAny(s, "/{} ") {
		return fmt.Errorf("--gateway-xds-client-secret %q: want a Secret name, optionally with %s", c.XDSClientSecret, GatewayPlaceholder)
	}
	if c.Infrastructure == nil || len(c.Infrastructure.Namespaces) == 0 {
		return fmt.Errorf("--provision-namespaces: empty: name the namespaces where Gateways get their Envoy (each needs the provisioner's Role), or %s for every namespace", infrastructure.AllNamespaces)
	}
	for _, ns := range c.Infrastructure.Namespaces {
		if ns != infrastructure.AllNamespaces && len(validation.IsDNS1123Label(ns)) > 0 {
			return fmt.Errorf("--provision-namespaces: %q is not a namespace name", ns)
		}
	}
	return nil
}

// xdsHost is the host part of XDSAddress.
func (c Config) xdsHost() string {
	host, _, _ := net.SplitHostPort(c.XDSAddress)
	return host
}

// clientSecret is the xDS client Secret of Gateway name, "" without TLS.
func (c Config) clientSecret(gateway string) string {
	return strings.ReplaceAll(c.XDSClientSecret, GatewayPlaceholder, gateway)
}
