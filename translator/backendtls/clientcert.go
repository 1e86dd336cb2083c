package backendtls

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// ReasonInvalidClientCertificateRef is the ResolvedRefs reason of a policy
// whose client certificate Secret cannot be used: the reason Gateway API
// gives a Gateway's backend client certificate.
const ReasonInvalidClientCertificateRef = "InvalidClientCertificateRef"

// ResolveClientCertificate reads the kubernetes.io/tls Secret name of
// namespace, or says what is wrong with it; field names where the name
// was given (a policy's option, an XBackend's clientCertificateRef).
func ResolveClientCertificate(namespace, name, field string, ix *input.Index) (*plan.ClientCertificate, string) {
	nn := input.NameOf(namespace, name)
	what := fmt.Sprintf("%s: Secret %s", field, nn)
	s, ok := ix.Secrets[nn]
	switch {
	case !ok:
		return nil, what + " does not exist"
	case s.Type != corev1.SecretTypeTLS:
		return nil, fmt.Sprintf("%s is of type %q, not %q", what, s.Type, corev1.SecretTypeTLS)
	}
	chain, key, err := input.KeyPair(s)
	if err != nil {
		return nil, what + ": " + err.Error()
	}
	return &plan.ClientCertificate{SecretName: plan.ClientCertificateSecretName(nn.Namespace, nn.Name), Chain: chain, Key: key}, ""
}
