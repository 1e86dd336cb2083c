package provisioner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/infrastructure"
)

// Labels and annotations of ours on what is provisioned; they win over
// spec.infrastructure's of the same key.
const (
	// ManagedByLabel selects what the provisioner watches.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "tlsplane"
	// ComponentLabel tells the Envoy Pods from anything else labelled with
	// the Gateway's name.
	ComponentLabel = "app.kubernetes.io/component"
	Component      = "gateway-envoy"
	// ControllerAnnotation names the controllerName that provisioned the
	// object: another tlsplane (another controllerName) leaves it alone.
	ControllerAnnotation = "tlsplane.io/controller"
	// AppliedAnnotation is a hash of the applied configuration: equal
	// means nothing to write.
	AppliedAnnotation = "tlsplane.io/applied"
	// BootstrapAnnotation on the Pod template is a hash of the bootstrap,
	// so a new bootstrap rolls the Pods.
	BootstrapAnnotation = "tlsplane.io/bootstrap"
)

// ObjectName is the name of every object provisioned for Gateway name: a
// DNS-1035 label (a Service's name must be one), readable when it can be.
func ObjectName(gateway string) string {
	name := "tlsplane-" + gateway
	if len(validation.IsDNS1035Label(name)) == 0 {
		return name
	}
	clean := strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, gateway), "-")
	if len(clean) > 40 {
		clean = strings.TrimRight(clean[:40], "-")
	}
	return "tlsplane-" + clean + "-" + shortHash(gateway)
}

// checkName refuses a Gateway whose name cannot be the gateway-name
// label's value (more than 63 characters).
func checkName(gw *gwv1.Gateway) error {
	if errs := validation.IsValidLabelValue(gw.Name); len(errs) > 0 {
		return fmt.Errorf("Gateway %s/%s: its name cannot be the value of label %s (%s): not provisioned",
			gw.Namespace, gw.Name, gwv1.GatewayNameLabelKey, strings.Join(errs, "; "))
	}
	return nil
}

// selector picks the Gateway's Envoy Pods.
func selector(gw *gwv1.Gateway) map[string]string {
	return map[string]string{gwv1.GatewayNameLabelKey: gw.Name, ComponentLabel: Component}
}

// labelsFor are the spec.infrastructure.labels the policy copies, then
// ours.
func labelsFor(gw *gwv1.Gateway, infra infrastructure.Metadata) map[string]string {
	out := map[string]string{}
	for k, v := range infra.Labels {
		out[k] = v
	}
	for k, v := range selector(gw) {
		out[k] = v
	}
	out[ManagedByLabel] = ManagedBy
	return out
}

// annotationsFor are the spec.infrastructure.annotations the policy
// copies, plus ours when controller is set (not on the Pod template).
func annotationsFor(infra infrastructure.Metadata, controller gwv1.GatewayController) map[string]string {
	out := map[string]string{}
	for k, v := range infra.Annotations {
		out[k] = v
	}
	if controller != "" {
		out[ControllerAnnotation] = string(controller)
	}
	return out
}

// ownerReference makes the Gateway the controller of the object, so the
// garbage collector deletes it with the Gateway. blockOwnerDeletion is
// left out: it would need the right to update the Gateway's finalizers.
func ownerReference(gw *gwv1.Gateway) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(gwv1.GroupVersion.String()).WithKind("Gateway").
		WithName(gw.Name).WithUID(gw.UID).WithController(true)
}

// ownedBy reports whether refs name the Gateway of that UID.
func ownedBy(refs []metav1.OwnerReference, uid string) bool {
	for _, r := range refs {
		if string(r.UID) == uid && r.Kind == "Gateway" {
			return true
		}
	}
	return false
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:10]
}

func metav1acSelector(labels map[string]string) *metav1ac.LabelSelectorApplyConfiguration {
	return metav1ac.LabelSelector().WithMatchLabels(labels)
}
