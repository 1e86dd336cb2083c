package tlsopts

import (
	"fmt"
	"regexp"
)

// ClientCertificateKey is the option naming a policy's client certificate
// Secret; the engine indexes policies by it without parsing the rest.
const ClientCertificateKey = optClientCertificateRef

// secretNamePattern is a Kubernetes object name (a DNS-1123 subdomain).
var secretNamePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// parseSecretName reads a Secret's name, in the policy's namespace: a
// reference to another namespace would need a ReferenceGrant, which an
// option cannot carry.
func parseSecretName(value string) (string, error) {
	if len(value) > 253 || !secretNamePattern.MatchString(value) {
		return "", fmt.Errorf("%s is not a Secret name (a DNS subdomain) in the policy's namespace", quoteValue(value))
	}
	return value, nil
}
