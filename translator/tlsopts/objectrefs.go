package tlsopts

import (
	"fmt"
	"regexp"
	"strings"
)

// The options naming objects, which the engine indexes policies by
// without parsing the rest.
const (
	ClientCertificateKey = optClientCertificateRef
	CRLKey               = optCRLRef
)

// secretNamePattern is a Kubernetes object name (a DNS-1123 subdomain).
var secretNamePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// parseSecretName reads a Secret's name, in the policy's namespace: a
// reference to another namespace would need a ReferenceGrant, which an
// option cannot carry.
func parseSecretName(value string) (string, error) {
	if !isObjectName(value) {
		return "", fmt.Errorf("%s is not a Secret name (a DNS subdomain) in the policy's namespace", quoteValue(value))
	}
	return value, nil
}

func isObjectName(s string) bool { return len(s) <= 253 && secretNamePattern.MatchString(s) }

// ObjectRef is a ConfigMap or a Secret of the policy's namespace, written
// Kind/name in an option; the zero value is none.
type ObjectRef struct {
	Kind string `json:"kind,omitempty"` // ConfigMap or Secret
	Name string `json:"name,omitempty"`
}

// ParseObjectRef reads "ConfigMap/<name>" or "Secret/<name>"; the engine
// also reads option values with it without parsing the rest.
func ParseObjectRef(value string) (ObjectRef, error) {
	kind, name, ok := strings.Cut(value, "/")
	if !ok || (kind != "ConfigMap" && kind != "Secret") || !isObjectName(name) {
		return ObjectRef{}, fmt.Errorf("%s is not ConfigMap/<name> or Secret/<name> of the policy's namespace", quoteValue(value))
	}
	return ObjectRef{Kind: kind, Name: name}, nil
}
