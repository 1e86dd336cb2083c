package apiserver

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// MutatingWebhookAt is the one MutatingWebhookConfiguration of manifest
// (deploy/mesh-injection.yaml, whose webhook calls a Service's /inject)
// pointed at url instead and trusting caPEM, so a test registers the
// configuration users install rather than a copy of it.
func MutatingWebhookAt(manifest []byte, url string, caPEM []byte) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	objs, err := DecodeManifest(manifest)
	if err != nil {
		return nil, err
	}
	var cfg *admissionregistrationv1.MutatingWebhookConfiguration
	for _, o := range objs {
		if o.GetKind() == "MutatingWebhookConfiguration" {
			cfg = &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, cfg); err != nil {
				return nil, err
			}
		}
	}
	if cfg == nil || len(cfg.Webhooks) != 1 || cfg.Webhooks[0].ClientConfig.Service == nil ||
		cfg.Webhooks[0].ClientConfig.Service.Path == nil || *cfg.Webhooks[0].ClientConfig.Service.Path != "/inject" {
		return nil, fmt.Errorf("want one MutatingWebhookConfiguration with one webhook on a Service's /inject, got %+v", cfg)
	}
	cfg.Annotations = nil
	cfg.Webhooks[0].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM}
	return cfg, nil
}
