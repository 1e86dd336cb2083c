package kubechurn

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The edits of an idle world, each one API call as a user's kubectl makes
// it: a merge patch of the one field that changes (an EndpointSlice is
// updated whole, as its controller does: world.update).

// caSecretName is tlsplane's SDS secret of Service i's CA ConfigMap.
func caSecretName(i int) string {
	return "CA/" + namespaceOf(i) + "/configmap/" + serviceName(i) + "-ca"
}

// hostname is Service i's policy's validation.hostname at generation g; 0
// is what world.create wrote.
func hostname(i, g int) string {
	if g == 0 {
		return serviceName(i) + ".example"
	}
	return fmt.Sprintf("%s-%d.example", serviceName(i), g)
}

// rotateCA replaces the CA bundle of Service i's ConfigMap and returns
// the ConfigMap's new resourceVersion.
func (w *world) rotateCA(ctx context.Context, i int, caPEM string) (string, error) {
	patch, err := json.Marshal(map[string]any{"data": map[string]string{"ca.crt": caPEM}})
	if err != nil {
		return "", err
	}
	out, err := w.kube.CoreV1().ConfigMaps(namespaceOf(i)).Patch(ctx, serviceName(i)+"-ca", types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return "", fmt.Errorf("patch ConfigMap %s/%s-ca: %w", namespaceOf(i), serviceName(i), err)
	}
	return out.ResourceVersion, nil
}

// setHostname changes Service i's policy's validation.hostname and
// returns the policy's new resourceVersion.
func (w *world) setHostname(ctx context.Context, i int, host string) (string, error) {
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"validation": map[string]string{"hostname": host}}})
	if err != nil {
		return "", err
	}
	out, err := w.gateway.GatewayV1().BackendTLSPolicies(namespaceOf(i)).Patch(ctx, serviceName(i)+"-tls", types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return "", fmt.Errorf("patch BackendTLSPolicy %s/%s-tls: %w", namespaceOf(i), serviceName(i), err)
	}
	return out.ResourceVersion, nil
}

// statusCurrent reports whether Service i's policy has a status whose
// every condition observed the policy's current generation: tlsplane has
// written what it thinks of the last edit, so that write (and its echo
// through the watch) is not in the next edit's way.
func (w *world) statusCurrent(ctx context.Context, i int) (bool, error) {
	p, err := w.gateway.GatewayV1().BackendTLSPolicies(namespaceOf(i)).Get(ctx, serviceName(i)+"-tls", metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	if len(p.Status.Ancestors) == 0 {
		return false, nil
	}
	for _, a := range p.Status.Ancestors {
		for _, c := range a.Conditions {
			if c.ObservedGeneration != p.Generation {
				return false, nil
			}
		}
	}
	return true, nil
}
