package gatewaytls

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/referencegrant"
)

// Certificate is a listener certificate Secret's parsed content.
type Certificate struct {
	SecretName string // SDS name
	Chain, Key []byte
	Err        error
}

// Certificates are the listener certificates of one run, by SDS name:
// each Secret is parsed once, however many listeners name it.
type Certificates map[string]*Certificate

// Resolve resolves a listener's certificateRefs: core Secrets, permitted
// by a ReferenceGrant across namespaces, holding a usable kubernetes.io/tls
// pair. ownerKind and owner are the Gateway or ListenerSet declaring the
// listener. It returns the refs' SDS names, or (none, and) the reason and
// message, naming the field, of the first ref that cannot be used.
func (c Certificates) Resolve(ownerKind string, owner types.NamespacedName, refs []gwv1.SecretObjectReference, ix *input.Index, grants referencegrant.Grants) ([]string, gwv1.ListenerConditionReason, string) {
	var (
		secrets []string
		reason  gwv1.ListenerConditionReason
		msg     string
	)
	fail := func(r gwv1.ListenerConditionReason, format string, args ...any) {
		if reason == "" {
			reason, msg = r, fmt.Sprintf(format, args...)
		}
	}
	for i, ref := range refs {
		group, kind := input.GroupKind(ref.Group, ref.Kind, "Secret")
		ns := owner.Namespace
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		field := fmt.Sprintf("tls.certificateRefs[%d]", i)
		if group != "" || kind != "Secret" {
			fail(gwv1.ListenerReasonInvalidCertificateRef, "%s: group %q kind %q: only core Secrets hold certificates", field, group, kind)
			continue
		}
		if !grants.Permits(referencegrant.Reference{FromGroup: gwv1.GroupName, FromKind: ownerKind, FromNamespace: owner.Namespace,
			ToKind: "Secret", ToNamespace: ns, ToName: string(ref.Name)}) {
			fail(gwv1.ListenerReasonRefNotPermitted, "%s: Secret %s/%s: no ReferenceGrant in %s permits %ss of %s", field, ns, ref.Name, ns, ownerKind, owner.Namespace)
			continue
		}
		nn := types.NamespacedName{Namespace: ns, Name: string(ref.Name)}
		cert := c.parse(nn, ix)
		if cert.Err != nil {
			fail(gwv1.ListenerReasonInvalidCertificateRef, "%s: Secret %s: %v", field, nn, cert.Err)
			continue
		}
		secrets = append(secrets, cert.SecretName)
	}
	if reason != "" {
		return nil, reason, msg
	}
	return secrets, "", ""
}

// parse parses a TLS Secret once per translation.
func (c Certificates) parse(nn types.NamespacedName, ix *input.Index) *Certificate {
	name := plan.CertificateSecretName(nn.Namespace, nn.Name)
	if cert, ok := c[name]; ok {
		return cert
	}
	cert := &Certificate{SecretName: name}
	c[name] = cert
	s, ok := ix.Secrets[nn]
	if !ok {
		cert.Err = fmt.Errorf("does not exist")
		return cert
	}
	chain, key, err := input.KeyPair(s)
	if err != nil {
		cert.Err = err
		return cert
	}
	cert.Chain, cert.Key = chain, key
	return cert
}
