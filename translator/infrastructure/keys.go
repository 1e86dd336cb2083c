package infrastructure

import "strings"

// DefaultDeniedKeys are the label and annotation keys never copied from
// spec.infrastructure unless the operator says otherwise: keys that grant
// a cloud or secrets identity to a ServiceAccount or Pod, keys reserved
// for Kubernetes (kubernetes.io, k8s.io: Pod Security, mountable secrets,
// seccomp), and tlsplane's own.
var DefaultDeniedKeys = []string{
	"eks.amazonaws.com/*",             // IRSA: eks.amazonaws.com/role-arn
	"iam.amazonaws.com/*",             // kiam, kube2iam: iam.amazonaws.com/role
	"iam.gke.io/*",                    // GKE workload identity: iam.gke.io/gcp-service-account
	"azure.workload.identity/*",       // Azure workload identity: client-id, use
	"pod-identity.alibabacloud.com/*", // ACK RRSA
	"vault.hashicorp.com/*",           // the Vault agent injector's role
	"kubernetes.io/*", "*.kubernetes.io/*",
	"k8s.io/*", "*.k8s.io/*",
	"tlsplane.io/*", "*.tlsplane.io/*",
}

// A pattern is a key, or a glob whose * stands for any run of characters,
// "/" included: "example.com/*", "*.example.com/*", "team-*", "*".

// matchAny reports whether key matches one of patterns.
func matchAny(patterns []string, key string) bool {
	for _, p := range patterns {
		if match(p, key) {
			return true
		}
	}
	return false
}

// match is glob matching where * is any run of characters.
func match(pattern, key string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == key
	}
	if !strings.HasPrefix(key, parts[0]) {
		return false
	}
	key = key[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(key, part)
		if i < 0 {
			return false
		}
		key = key[i+len(part):]
	}
	return len(key) >= len(last) && strings.HasSuffix(key, last)
}
