package translator

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// policyVerdict is what a policy's own spec and references decide, before
// its targets are considered: the TLS it asks for, or why it cannot.
type policyVerdict struct {
	policy *gwv1.BackendTLSPolicy
	name   types.NamespacedName

	tls   upstreamTLS // meaningful only when accepted
	trust trust
	// cluster is the packed TLS of an accepted policy, shared by every
	// port it governs.
	cluster clusterTLS
	// secret is the CA secret of an accepted policy that validates
	// certificates.
	secret *tlsv3.Secret

	// rejectReason and rejectMessage are set when the policy is not
	// accepted on any target (Invalid or NoValidCACertificate).
	rejectReason  gwv1.PolicyConditionReason
	rejectMessage string
}

func (v *policyVerdict) accepted() bool { return v.rejectReason == "" }

// reject records why the policy is not accepted; Invalid outranks
// NoValidCACertificate, and messages add up.
func (v *policyVerdict) reject(reason gwv1.PolicyConditionReason, message string) {
	if v.rejectReason == "" || reason == gwv1.PolicyReasonInvalid {
		v.rejectReason = reason
	}
	if v.rejectMessage != "" {
		message = v.rejectMessage + "; " + message
	}
	v.rejectMessage = message
}

// memos are what judgePolicy may reuse; a nil field remembers nothing.
type memos struct {
	cas         *caCache
	httpOptions *httpOptionsMemo
	options     *optionsMemo
}

// judgePolicy parses a policy's options and resolves its trust.
func judgePolicy(p *gwv1.BackendTLSPolicy, ix *objectIndex, opts Options, m memos, secretRules func(*tlsv3.Secret) error) *policyVerdict {
	nn := nameOf(p.Namespace, p.Name)
	v := &policyVerdict{policy: p, name: nn}
	v.trust = resolveTrust(nn.Namespace, p.Spec.Validation, ix, systemCABundlePath(opts), m.cas)
	if v.trust.invalid != "" {
		v.reject(gwv1.PolicyReasonInvalid, v.trust.invalid)
	}
	tlsOpts, err := m.options.parse(p.Spec.Options, opts.AllowInsecureSkipVerify)
	if err != nil {
		v.reject(gwv1.PolicyReasonInvalid, "spec.options: "+err.Error())
	}
	if p.Spec.Validation.Hostname == "" {
		v.reject(gwv1.PolicyReasonInvalid, "validation.hostname is required")
	}
	sans, err := policySANs(p.Spec.Validation)
	if err != nil {
		v.reject(gwv1.PolicyReasonInvalid, err.Error())
	}
	if v.trust.invalid == "" && v.trust.bundle == nil {
		msgs := make([]string, 0, len(v.trust.problems))
		for _, pr := range v.trust.problems {
			msgs = append(msgs, pr.message)
		}
		v.reject(gwv1.BackendTLSPolicyReasonNoValidCACertificate, "no valid CA certificate: "+strings.Join(msgs, "; "))
	}
	if !v.accepted() {
		return v
	}
	v.tls = upstreamTLS{
		sni:      string(p.Spec.Validation.Hostname),
		caSecret: v.trust.bundle.secretName,
		sans:     sans,
		params:   tlsOpts,
	}
	// Options are checked against Envoy by ParseOptions; this catches what
	// slipped through, before Envoy would NACK it.
	transport, httpOptions, err := packedTLS(upstreamTLSContext(v.tls), m.httpOptions)
	if err != nil {
		v.reject(gwv1.PolicyReasonInvalid, "Envoy would reject the TLS settings: "+err.Error())
		return v
	}
	if !v.tls.params.InsecureSkipVerify {
		secret := caSecret(v.trust.bundle)
		if err := secretRules(secret); err != nil {
			v.rejectUnservableCA(secret.Name, err)
			return v
		}
		v.secret = secret
	}
	v.cluster = newClusterTLS(transport, httpOptions)
	return v
}

// rejectUnservableCA: the CA parsed, but Envoy would refuse the SDS secret
// that carries it. No CA is usable, as when every ref is invalid
// (NoValidCACertificate, and InvalidCACertificateRef for refs), so the
// policy's ports fail closed and its status says why.
func (v *policyVerdict) rejectUnservableCA(secret string, err error) {
	b := v.trust.bundle
	what := "the system CA bundle " + strconv.Quote(b.systemPath)
	if b.pem != "" {
		what = "the CA bundle of " + b.sources
	}
	msg := fmt.Sprintf("%s cannot be served: Envoy would reject its SDS secret %s: %v", what, secret, err)
	if b.pem != "" {
		// Clipped: the problems may be shared with a remembered trust.
		v.trust.problems = append(slices.Clip(v.trust.problems), refProblem{
			reason:  gwv1.BackendTLSPolicyReasonInvalidCACertificateRef,
			message: "caCertificateRefs: " + msg,
		})
	}
	msgs := make([]string, 0, len(v.trust.problems)+1)
	for _, pr := range v.trust.problems {
		msgs = append(msgs, pr.message)
	}
	if b.pem == "" {
		msgs = append(msgs, msg)
	}
	v.reject(gwv1.BackendTLSPolicyReasonNoValidCACertificate, "no valid CA certificate: "+strings.Join(msgs, "; "))
}

// policySANs are the names a backend certificate must carry: the given
// subjectAltNames, or else the hostname (which must not authenticate when
// subjectAltNames are given).
// A SAN that is empty or of an unknown type is an error, never skipped:
// skipping it could leave no name to check.
func policySANs(v gwv1.BackendTLSPolicyValidation) ([]sanMatch, error) {
	if len(v.SubjectAltNames) == 0 {
		return []sanMatch{{kind: sanDNS, value: string(v.Hostname)}}, nil
	}
	out := make([]sanMatch, 0, len(v.SubjectAltNames))
	for i, san := range v.SubjectAltNames {
		m := sanMatch{kind: sanDNS, value: string(san.Hostname)}
		switch san.Type {
		case gwv1.HostnameSubjectAltNameType:
		case gwv1.URISubjectAltNameType:
			m = sanMatch{kind: sanURI, value: string(san.URI)}
		default:
			return nil, fmt.Errorf("validation.subjectAltNames[%d].type: %q is not Hostname or URI", i, san.Type)
		}
		if m.value == "" {
			return nil, fmt.Errorf("validation.subjectAltNames[%d]: the %s value is empty", i, san.Type)
		}
		out = append(out, m)
	}
	return out, nil
}

func systemCABundlePath(opts Options) string {
	if opts.SystemCABundlePath == "" {
		return DefaultSystemCABundlePath
	}
	return opts.SystemCABundlePath
}
