package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlsplane/tlsplane/provisioner"
	"github.com/tlsplane/tlsplane/translator/infrastructure"
)

// provisionFlags turn on the Gateway provisioner (Kubernetes mode only).
type provisionFlags struct {
	enabled     bool
	config      provisioner.Config
	serviceType string
	// namespaces, allowedLabels, allowedAnnotations and denied become
	// config.Infrastructure.
	namespaces, allowedLabels, allowedAnnotations, denied string
}

func registerProvisionFlags(fs *flag.FlagSet) *provisionFlags {
	f := &provisionFlags{}
	fs.BoolVar(&f.enabled, "provision-gateways", false, "Kubernetes mode: for each accepted Gateway in --provision-namespaces, create and keep its Envoy in its namespace (ServiceAccount, bootstrap ConfigMap, Deployment, Service), owned by the Gateway and carrying the spec.infrastructure labels and annotations the key flags allow; written by the status writer's leader")
	fs.StringVar(&f.namespaces, "provision-namespaces", "", "with --provision-gateways (required): comma-separated namespaces where Gateways are provisioned, each with the provisioner's Role (deploy/provisioner-rbac.yaml); a Gateway elsewhere gets condition tlsplane.io/Provisioning False and nothing is written for it. * provisions in every namespace (needs those writes cluster-wide)")
	fs.StringVar(&f.allowedLabels, "provision-allowed-label-keys", "*", "comma-separated spec.infrastructure.labels keys copied to the provisioned objects and Pods; * matches any run of characters (example.com/*); others are dropped and named in the Gateway's tlsplane.io/InfrastructureMetadata condition")
	fs.StringVar(&f.allowedAnnotations, "provision-allowed-annotation-keys", "*", "comma-separated spec.infrastructure.annotations keys copied to the provisioned objects and Pods, as --provision-allowed-label-keys")
	fs.StringVar(&f.denied, "provision-denied-keys", strings.Join(infrastructure.DefaultDeniedKeys, ","), "comma-separated label and annotation keys never copied from spec.infrastructure, even when allowed: by default those granting a cloud or Vault identity, and kubernetes.io, k8s.io and tlsplane.io keys; empty denies none")
	fs.StringVar(&f.config.Image, "gateway-envoy-image", provisioner.DefaultImage, "the Envoy image of the provisioned Deployments")
	fs.StringVar(&f.config.XDSAddress, "gateway-xds-address", "", "`host:port` the provisioned Envoys dial for ADS: tlsplane's xDS Service (e.g. tlsplane-xds.tlsplane-system.svc:18000); required with --provision-gateways")
	fs.StringVar(&f.serviceType, "gateway-service-type", string(corev1.ServiceTypeLoadBalancer), "type of each provisioned Gateway's Service: LoadBalancer, NodePort or ClusterIP")
	fs.StringVar(&f.config.XDSClientSecret, "gateway-xds-client-secret", "", "with xDS mutual TLS (--xds-tls-*): the Secret, in each Gateway's namespace, mounted into its Envoys: tls.crt and tls.key (a client certificate carrying the fleet identity of --xds-fleet-identity) and ca.crt (the CA of tlsplane's certificate, which must name --gateway-xds-address's host); "+provisioner.GatewayPlaceholder+" is replaced by the Gateway's name")
	return f
}

// check is run after parsing: the flags against the source, the watched
// namespaces (--namespaces, "" for all) and xDS TLS.
func (f *provisionFlags) check(kube, mutualTLS bool, watched string) error {
	if !f.enabled {
		if f.namespaces != "" {
			return errors.New("--provision-namespaces needs --provision-gateways")
		}
		return nil
	}
	if !kube {
		return errors.New("--provision-gateways needs Kubernetes mode (--kubeconfig, or in a Pod)")
	}
	f.config.ServiceType = corev1.ServiceType(f.serviceType)
	policy := &infrastructure.Policy{
		Namespaces:       splitList(f.namespaces),
		AllowedLabelKeys: splitList(f.allowedLabels), AllowedAnnotationKeys: splitList(f.allowedAnnotations),
		DeniedKeys: splitList(f.denied),
	}
	f.config.Infrastructure = policy
	if err := f.config.Check(); err != nil {
		return err
	}
	if w := splitList(watched); len(w) > 0 {
		for _, ns := range policy.Namespaces {
			if ns != infrastructure.AllNamespaces && !slices.Contains(w, ns) {
				return fmt.Errorf("--provision-namespaces: %s is not one of --namespaces (%s): its Gateways are not seen", ns, watched)
			}
		}
	}
	switch {
	case mutualTLS && f.config.XDSClientSecret == "":
		return errors.New("--provision-gateways with xDS mutual TLS needs --gateway-xds-client-secret: the provisioned Envoys' client certificate")
	case !mutualTLS && f.config.XDSClientSecret != "":
		return errors.New("--gateway-xds-client-secret needs xDS mutual TLS (--xds-tls-cert, --xds-tls-key, --xds-client-ca)")
	}
	return nil
}

// policy is the provisioning policy the translator reports on Gateway
// statuses; nil without --provision-gateways.
func (f *provisionFlags) policy() *infrastructure.Policy {
	if !f.enabled {
		return nil
	}
	return f.config.Infrastructure
}
