package main

import (
	"errors"
	"flag"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlsplane/tlsplane/provisioner"
)

// provisionFlags turn on the Gateway provisioner (Kubernetes mode only).
type provisionFlags struct {
	enabled     bool
	config      provisioner.Config
	serviceType string
}

func registerProvisionFlags(fs *flag.FlagSet) *provisionFlags {
	f := &provisionFlags{}
	fs.BoolVar(&f.enabled, "provision-gateways", false, "Kubernetes mode: for each accepted Gateway, create and keep its Envoy in its namespace (ServiceAccount, bootstrap ConfigMap, Deployment, Service), owned by the Gateway and carrying its spec.infrastructure labels and annotations; written by the status writer's leader")
	fs.StringVar(&f.config.Image, "gateway-envoy-image", provisioner.DefaultImage, "the Envoy image of the provisioned Deployments")
	fs.StringVar(&f.config.XDSAddress, "gateway-xds-address", "", "`host:port` the provisioned Envoys dial for ADS: tlsplane's xDS Service (e.g. tlsplane-xds.tlsplane-system.svc:18000); required with --provision-gateways")
	fs.StringVar(&f.serviceType, "gateway-service-type", string(corev1.ServiceTypeLoadBalancer), "type of each provisioned Gateway's Service: LoadBalancer, NodePort or ClusterIP")
	fs.StringVar(&f.config.XDSClientSecret, "gateway-xds-client-secret", "", "with xDS mutual TLS (--xds-tls-*): the Secret, in each Gateway's namespace, mounted into its Envoys: tls.crt and tls.key (a client certificate carrying the fleet identity of --xds-fleet-identity) and ca.crt (the CA of tlsplane's certificate, which must name --gateway-xds-address's host); "+provisioner.GatewayPlaceholder+" is replaced by the Gateway's name")
	return f
}

// check is run after parsing: the flags against the source and xDS TLS.
func (f *provisionFlags) check(kube, mutualTLS bool) error {
	if !f.enabled {
		return nil
	}
	if !kube {
		return errors.New("--provision-gateways needs Kubernetes mode (--kubeconfig, or in a Pod)")
	}
	f.config.ServiceType = corev1.ServiceType(f.serviceType)
	if err := f.config.Check(); err != nil {
		return err
	}
	switch {
	case mutualTLS && f.config.XDSClientSecret == "":
		return errors.New("--provision-gateways with xDS mutual TLS needs --gateway-xds-client-secret: the provisioned Envoys' client certificate")
	case !mutualTLS && f.config.XDSClientSecret != "":
		return errors.New("--gateway-xds-client-secret needs xDS mutual TLS (--xds-tls-cert, --xds-tls-key, --xds-client-ca)")
	}
	return nil
}
