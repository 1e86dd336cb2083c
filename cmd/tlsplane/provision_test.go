package main

import (
	"io"
	"strings"
	"testing"
)

func TestProvisionFlags(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	mtls := []string{"--xds-tls-cert", "c", "--xds-tls-key", "k", "--xds-client-ca", "ca"}
	for _, c := range []struct {
		name string
		args []string
		want string // "" for accepted
	}{
		{"off", []string{"--kubeconfig", "/k"}, ""},
		{"on", []string{"--kubeconfig", "/k", "--provision-gateways", "--provision-namespaces", "shop", "--gateway-xds-address", "tlsplane-xds.tlsplane-system.svc:18000"}, ""},
		{"no provision namespaces", []string{"--kubeconfig", "/k", "--provision-gateways", "--gateway-xds-address", "x:1"}, "--provision-namespaces: empty"},
		{"every namespace", []string{"--kubeconfig", "/k", "--provision-gateways", "--provision-namespaces", "*", "--gateway-xds-address", "x:1"}, ""},
		{"provision namespace not watched", []string{"--kubeconfig", "/k", "--namespaces", "shop", "--provision-gateways", "--provision-namespaces", "shop,pay", "--gateway-xds-address", "x:1"}, "pay is not one of --namespaces"},
		{"provision namespaces without provisioning", []string{"--kubeconfig", "/k", "--provision-namespaces", "shop"}, "needs --provision-gateways"},
		{"no xds address", []string{"--kubeconfig", "/k", "--provision-gateways"}, "--gateway-xds-address"},
		{"dir mode", []string{"--dir", "/d", "--provision-gateways", "--provision-namespaces", "shop", "--gateway-xds-address", "x:1"}, "Kubernetes mode"},
		{"bad service type", []string{"--kubeconfig", "/k", "--provision-gateways", "--provision-namespaces", "shop", "--gateway-xds-address", "x:1", "--gateway-service-type", "ExternalName"}, "--gateway-service-type"},
		{"mutual TLS without client secret", append([]string{"--kubeconfig", "/k", "--provision-gateways", "--provision-namespaces", "shop", "--gateway-xds-address", "x:1"}, mtls...), "--gateway-xds-client-secret"},
		{"mutual TLS with client secret", append([]string{"--kubeconfig", "/k", "--provision-gateways", "--provision-namespaces", "shop", "--gateway-xds-address", "x:1", "--gateway-xds-client-secret", "{gateway}-xds"}, mtls...), ""},
		{"client secret without mutual TLS", []string{"--kubeconfig", "/k", "--provision-gateways", "--provision-namespaces", "shop", "--gateway-xds-address", "x:1", "--gateway-xds-client-secret", "s"}, "needs xDS mutual TLS"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := parseServeFlags(c.args, io.Discard)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if cfg.provision.enabled && cfg.provision.config.ServiceType != "LoadBalancer" {
					t.Errorf("service type %q, want the default LoadBalancer", cfg.provision.config.ServiceType)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v, want an error naming %s", err, c.want)
			}
		})
	}
}
