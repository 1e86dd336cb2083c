package backendtls

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/capem"
	"github.com/tlsplane/tlsplane/translator/condition"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/tlsopts"
)

// Verdict is what a policy's own spec and references decide, before
// its targets are considered: the TLS it asks for, or why it cannot. The
// engine adds what the emitter refuses (Reject, RejectUnservableCA)
// before anyone else reads it; after that it is read-only.
type Verdict struct {
	Policy *gwv1.BackendTLSPolicy
	Name   types.NamespacedName

	TLS   plan.UpstreamTLS // meaningful only when accepted
	Trust Trust
	// ClientCert is the certificate Envoy presents to the backend
	// (tlsplane.io/clientCertificateRef); nil without one.
	ClientCert *plan.ClientCertificate
	// CRL is the revocation lists served with the CA bundle
	// (tlsplane.io/crlRef); nil without.
	CRL *CRL
	// FetchedCRLs are the distribution points tlsplane.io/crlDistributionPoints
	// wants and how fresh their lists are; zero without the option.
	FetchedCRLs FetchedCRLs
	// optionProblems say why an object an option names (the client
	// certificate, the CRL) cannot be used, with ResolvedRefs' reason.
	optionProblems []RefProblem

	// RejectReason and RejectMessage are set when the policy is not
	// accepted on any target (Invalid or NoValidCACertificate).
	RejectReason  gwv1.PolicyConditionReason
	RejectMessage string
}

// rejectOption records an object an option names that cannot be used:
// the policy fails closed, and ResolvedRefs says why.
func (v *Verdict) rejectOption(reason, problem string) {
	v.optionProblems = append(v.optionProblems, RefProblem{Reason: gwv1.PolicyConditionReason(reason), Message: problem})
	v.Reject(gwv1.PolicyReasonInvalid, problem)
}

// Accepted: the policy can be applied.
func (v *Verdict) Accepted() bool { return v.RejectReason == "" }

// Reject records why the policy is not accepted; Invalid outranks
// NoValidCACertificate, and messages add up.
func (v *Verdict) Reject(reason gwv1.PolicyConditionReason, message string) {
	condition.AddFault(&v.RejectReason, &v.RejectMessage, reason, message, gwv1.PolicyReasonInvalid)
}

// Config is what judging a policy reads of the control plane's options.
type Config struct {
	// SystemCABundlePath is the file, on the Envoy host, that
	// `wellKnownCACertificates: System` trusts.
	SystemCABundlePath string
	// AllowInsecureSkipVerify honours tlsplane.io/insecureSkipVerify.
	AllowInsecureSkipVerify bool
	// CRLFetch: revocation lists are fetched from distribution points
	// (tlsplane.io/crlDistributionPoints is honoured).
	CRLFetch bool
	// CAExpiryWarning is how long before a trusted CA expires an accepted
	// policy's Accepted message warns; DefaultCAExpiryWarning when zero,
	// never when negative.
	CAExpiryWarning time.Duration
	// ControllerName is written into every ancestor entry we own.
	ControllerName gwv1.GatewayController
}

// Memos are what Judge may reuse across calls; a nil field remembers
// nothing.
type Memos struct {
	CAs     *capem.Cache
	Options *tlsopts.Memo
}

// Judge parses a policy's options and resolves its trust. An accepted
// verdict's TLS is what the emitter is asked to build next.
func Judge(p *gwv1.BackendTLSPolicy, ix *input.Index, cfg Config, m Memos) *Verdict {
	nn := input.NameOf(p.Namespace, p.Name)
	v := &Verdict{Policy: p, Name: nn}
	v.Trust = ResolveTrust(nn.Namespace, p.Spec.Validation, ix, cfg.SystemCABundlePath, m.CAs)
	if v.Trust.invalid != "" {
		v.Reject(gwv1.PolicyReasonInvalid, v.Trust.invalid)
	}
	tlsOpts, err := tlsopts.ParseWith(m.Options, p.Spec.Options, cfg.AllowInsecureSkipVerify)
	if err != nil {
		v.Reject(gwv1.PolicyReasonInvalid, "spec.options: "+err.Error())
	}
	if name := tlsOpts.ClientCertificateRef; err == nil && name != "" {
		// Never without it: a policy whose certificate is unusable fails
		// closed rather than connect as nobody.
		var problem string
		if v.ClientCert, problem = ResolveClientCertificate(nn.Namespace, name, "option "+tlsopts.ClientCertificateKey, ix); problem != "" {
			v.rejectOption(ReasonInvalidClientCertificateRef, problem)
		}
	}
	if ref := tlsOpts.CRLRef; err == nil && ref != nil && v.Trust.Bundle != nil {
		var problem string
		if v.Trust.Bundle, v.CRL, problem = WithCRL(nn.Namespace, *ref, v.Trust.Bundle, ix); problem != "" {
			v.rejectOption(ReasonInvalidCRLRef, problem)
		}
	}
	if policy := tlsOpts.CRLDistributionPoints; err == nil && policy != "" && v.Trust.Bundle != nil {
		var problem string
		if v.Trust.Bundle, v.FetchedCRLs, problem = WithFetchedCRLs(policy, tlsOpts.CRLDistributionPointURLs, cfg.CRLFetch, v.Trust.Bundle, ix); problem != "" {
			v.rejectOption(ReasonCRLUnavailable, problem)
		}
	}
	if p.Spec.Validation.Hostname == "" {
		v.Reject(gwv1.PolicyReasonInvalid, "validation.hostname is required")
	}
	sans, err := SANs(p.Spec.Validation)
	if err != nil {
		v.Reject(gwv1.PolicyReasonInvalid, err.Error())
	}
	if v.Trust.invalid == "" && v.Trust.Bundle == nil {
		v.Reject(gwv1.BackendTLSPolicyReasonNoValidCACertificate, "no valid CA certificate: "+strings.Join(v.Trust.ProblemMessages(), "; "))
	}
	if !v.Accepted() {
		return v
	}
	// URI prefixes authenticate besides the spec's names: Envoy accepts a
	// certificate that any SAN matcher matches.
	for _, prefix := range tlsOpts.SANURIPrefixes {
		sans = append(sans, plan.SANMatch{Kind: plan.SANURIPrefix, Value: prefix})
	}
	v.TLS = plan.UpstreamTLS{
		SNI:      string(p.Spec.Validation.Hostname),
		CASecret: v.Trust.Bundle.SecretName,
		SANs:     sans,
		Params:   tlsOpts,
	}
	if v.ClientCert != nil {
		v.TLS.ClientCertificate = v.ClientCert.SecretName
	}
	return v
}

// RejectUnservableCA: the CA parsed, but Envoy would refuse the SDS secret
// that carries it. No CA is usable, as when every ref is invalid
// (NoValidCACertificate, and InvalidCACertificateRef for refs), so the
// policy's ports fail closed and its status says why.
func (v *Verdict) RejectUnservableCA(secret string, err error) {
	b := v.Trust.Bundle
	what := "the system CA bundle " + strconv.Quote(b.SystemPath)
	if b.PEM != "" {
		what = "the CA bundle of " + b.Sources
	}
	msg := fmt.Sprintf("%s cannot be served: Envoy would reject its SDS secret %s: %v", what, secret, err)
	if b.PEM != "" {
		// Clipped: the problems may be shared with a remembered trust.
		v.Trust.Problems = append(slices.Clip(v.Trust.Problems), RefProblem{
			Reason:  gwv1.BackendTLSPolicyReasonInvalidCACertificateRef,
			Message: "caCertificateRefs: " + msg,
		})
	}
	msgs := make([]string, 0, len(v.Trust.Problems)+1)
	for _, pr := range v.Trust.Problems {
		msgs = append(msgs, pr.Message)
	}
	if b.PEM == "" {
		msgs = append(msgs, msg)
	}
	v.Reject(gwv1.BackendTLSPolicyReasonNoValidCACertificate, "no valid CA certificate: "+strings.Join(msgs, "; "))
}

// SANs are the names a backend certificate must carry: the given
// subjectAltNames, or else the hostname (which must not authenticate when
// subjectAltNames are given).
// A SAN that is empty or of an unknown type is an error, never skipped:
// skipping it could leave no name to check.
func SANs(v gwv1.BackendTLSPolicyValidation) ([]plan.SANMatch, error) {
	if len(v.SubjectAltNames) == 0 {
		return []plan.SANMatch{{Kind: plan.SANDNS, Value: string(v.Hostname)}}, nil
	}
	out := make([]plan.SANMatch, 0, len(v.SubjectAltNames))
	for i, san := range v.SubjectAltNames {
		m := plan.SANMatch{Kind: plan.SANDNS, Value: string(san.Hostname)}
		switch san.Type {
		case gwv1.HostnameSubjectAltNameType:
		case gwv1.URISubjectAltNameType:
			m = plan.SANMatch{Kind: plan.SANURI, Value: string(san.URI)}
		default:
			return nil, fmt.Errorf("validation.subjectAltNames[%d].type: %q is not Hostname or URI", i, san.Type)
		}
		if m.Value == "" {
			return nil, fmt.Errorf("validation.subjectAltNames[%d]: the %s value is empty", i, san.Type)
		}
		out = append(out, m)
	}
	return out, nil
}
