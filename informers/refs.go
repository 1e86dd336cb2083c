package informers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/input"
)

// refs counts the references to ConfigMaps and Secrets that
// BackendTLSPolicies and XBackends read (CA certificate refs, client
// certificates, CRLs) and Gateways name (their listeners' certificate refs, their backend client
// certificate, their spec.tls.frontend client CAs): only changes to these can change a translation. (Every
// Service is translated, into a plain cluster when no policy targets it,
// so Services and EndpointSlices are always relevant.) Kept per object, so
// an event adjusts them by its own object's references (an edit among
// 10,000 policies does not list the 10,000), and an event seen twice, or
// an object the first listing held already, counts once.
type refs struct {
	configMaps, secrets map[types.NamespacedName]int
	held                map[heldKey][]ref
}

// heldKey is a policy, a Gateway, a ListenerSet or an XBackend.
type heldKey struct {
	kind string
	nn   types.NamespacedName
}

// ref is one ConfigMap or Secret referred to.
type ref struct {
	kind translator.Kind
	nn   types.NamespacedName
}

func refsOf(policies []*gwv1.BackendTLSPolicy, gateways []*gwv1.Gateway, sets []*gwv1.ListenerSet, xBackends []*gwxv1a1.XBackend) refs {
	r := refs{
		configMaps: map[types.NamespacedName]int{},
		secrets:    map[types.NamespacedName]int{},
		held:       map[heldKey][]ref{},
	}
	for _, p := range policies {
		r.hold(kindPolicy, p, nil)
	}
	for _, g := range gateways {
		r.hold(kindGateway, g, nil)
	}
	for _, s := range sets {
		r.hold(kindListenerSet, s, nil)
	}
	for _, x := range xBackends {
		r.hold(kindXBackend, x, nil)
	}
	return r
}

// referenced reports whether a ConfigMap (or Secret) is referenced now.
func (r refs) referenced(kind translator.Kind, nn types.NamespacedName) bool {
	return r.set(kind)[nn] > 0
}

func (r refs) set(kind translator.Kind) map[types.NamespacedName]int {
	if kind == translator.KindConfigMap {
		return r.configMaps
	}
	return r.secrets
}

// hold makes obj's references (a policy's or a Gateway's, of kind) the
// ones its key holds; release is hold of a deleted object. flipped, when
// set, is called for each ConfigMap or Secret that became referenced or
// stopped being so.
func (r refs) hold(kind string, obj metav1.Object, flipped func(translator.Kind, types.NamespacedName)) {
	key := heldKey{kind, types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
	r.replace(key, refsOfObject(obj), flipped)
}

func (r refs) release(kind string, obj metav1.Object, flipped func(translator.Kind, types.NamespacedName)) {
	r.replace(heldKey{kind, types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}, nil, flipped)
}

// replace counts now's references in before the key's old ones out, so a
// reference both hold never flips.
func (r refs) replace(key heldKey, now []ref, flipped func(translator.Kind, types.NamespacedName)) {
	adjust := func(x ref, sign int) {
		set := r.set(x.kind)
		before := set[x.nn]
		if after := before + sign; after > 0 {
			set[x.nn] = after
		} else {
			delete(set, x.nn)
		}
		if flipped != nil && (before == 0) != (set[x.nn] == 0) {
			flipped(x.kind, x.nn)
		}
	}
	for _, x := range now {
		adjust(x, 1)
	}
	for _, x := range r.held[key] {
		adjust(x, -1)
	}
	if len(now) == 0 {
		delete(r.held, key)
	} else {
		r.held[key] = now
	}
}

// refsOfObject is what a policy's verdict reads (CA refs, client
// certificate) or the Secrets a Gateway names and the ConfigMaps and
// Secrets of its client CAs; nothing for other objects.
func refsOfObject(obj any) []ref {
	var out []ref
	switch o := obj.(type) {
	case *gwv1.BackendTLSPolicy:
		for _, x := range backendtls.AppendRefs(nil, o) {
			kind := translator.KindSecret
			if x.Kind == input.KindConfigMap {
				kind = translator.KindConfigMap
			}
			out = append(out, ref{kind, x.Name})
		}
	case *gwv1.Gateway:
		for _, nn := range gatewaySecrets(o) {
			out = append(out, ref{translator.KindSecret, nn})
		}
		for _, x := range input.FrontendCARefs(o) {
			out = append(out, ref{x.Kind, x.Name})
		}
	case *gwxv1a1.XBackend:
		out = xBackendRefs(o)
	case *gwv1.ListenerSet:
		for _, l := range o.Spec.Listeners {
			for _, nn := range listenerSecrets(o.Namespace, l.TLS) {
				out = append(out, ref{translator.KindSecret, nn})
			}
		}
	}
	return out
}

// gatewaySecrets are the Secrets a Gateway names: its backend client
// certificate and its listeners' certificates.
func gatewaySecrets(g *gwv1.Gateway) []types.NamespacedName {
	var out []types.NamespacedName
	if t := g.Spec.TLS; t != nil && t.Backend != nil && t.Backend.ClientCertificateRef != nil {
		c := t.Backend.ClientCertificateRef
		if (c.Group == nil || *c.Group == "") && (c.Kind == nil || *c.Kind == "Secret") {
			out = append(out, secretOf(g.Namespace, c.Name, c.Namespace))
		}
	}
	for _, l := range g.Spec.Listeners {
		out = append(out, listenerSecrets(g.Namespace, l.TLS)...)
	}
	return out
}

// listenerSecrets are the Secrets a listener's certificateRefs name, for
// a listener of a Gateway or ListenerSet of namespace ns.
func listenerSecrets(ns string, tls *gwv1.ListenerTLSConfig) []types.NamespacedName {
	if tls == nil {
		return nil
	}
	var out []types.NamespacedName
	for _, c := range tls.CertificateRefs {
		if (c.Group != nil && *c.Group != "") || (c.Kind != nil && *c.Kind != "Secret") {
			continue
		}
		// A reference to another namespace is read even before a
		// ReferenceGrant permits it: the grant may come next.
		out = append(out, secretOf(ns, c.Name, c.Namespace))
	}
	return out
}

// secretOf is the Secret a Gateway's reference names.
func secretOf(gatewayNamespace string, name gwv1.ObjectName, namespace *gwv1.Namespace) types.NamespacedName {
	nn := types.NamespacedName{Namespace: gatewayNamespace, Name: string(name)}
	if namespace != nil {
		nn.Namespace = string(*namespace)
	}
	return nn
}
