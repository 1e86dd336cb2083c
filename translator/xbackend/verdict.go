package xbackend

import (
	"fmt"
	"net/netip"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/condition"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/tlsopts"
)

// The reasons of an XBackend's conditions (D6; GEP-4894 names the
// condition types, not all reasons).
const (
	ReasonAccepted                = "Accepted"
	ReasonInvalid                 = "Invalid"
	ReasonNoValidCACertificate    = "NoValidCACertificate"
	ReasonResolvedRefs            = "ResolvedRefs"
	ReasonInvalidCertificateRef   = "InvalidCertificateRef"
	ReasonRefNotPermitted         = "RefNotPermitted"
	ReasonInvalidKind             = "InvalidKind"
	ReasonInvalidCACertificateRef = "InvalidCACertificateRef"
)

// Verdict is what an XBackend's own spec and references decide: its
// destination, protocol and TLS, or why it cannot be used. The engine adds
// what the emitter refuses (Reject) before routes read it.
type Verdict struct {
	Backend  *gwxv1a1.XBackend
	Name     types.NamespacedName
	Hostname string
	Port     int32
	// Protocol is spec.protocol; "" when unset.
	Protocol gwxv1a1.BackendProtocol
	// Mode is spec.tls.mode; None when spec.tls is absent.
	Mode gwxv1a1.BackendTLSMode
	// TLS is the clusters' upstream TLS, before each family's ALPN; nil
	// for plaintext. Meaningful only when accepted.
	TLS *plan.UpstreamTLS
	// CA is the trust served with it (nil: plaintext, or verification
	// off); ClientCert the certificate presented (ClientAndServer).
	CA         *backendtls.Bundle
	ClientCert *plan.ClientCertificate
	// CRL is the revocation lists served with CA (tlsplane.io/crlRef);
	// nil for none.
	CRL *backendtls.CRL
	// FetchedCRLs are what tlsplane.io/crlDistributionPoints wants and how
	// fresh the lists are; zero without the option.
	FetchedCRLs backendtls.FetchedCRLs

	// RejectReason and RejectMessage say why it is not Accepted ("" when
	// it is); ResolvedReason and ResolvedMessage why a reference does not
	// resolve.
	RejectReason, RejectMessage     string
	ResolvedReason, ResolvedMessage string
}

// Accepted: routes may send to it.
func (v *Verdict) Accepted() bool { return v.RejectReason == "" }

// Reject records why it is not accepted; Invalid outranks
// NoValidCACertificate, and messages add up.
func (v *Verdict) Reject(reason, message string) {
	condition.AddFault(&v.RejectReason, &v.RejectMessage, reason, fmt.Sprintf("XBackend %s: %s", v.Name, message), ReasonInvalid)
}

// unresolved records a reference that does not resolve; the first
// reason stays.
func (v *Verdict) unresolved(reason, message string) {
	condition.AddFault(&v.ResolvedReason, &v.ResolvedMessage, reason, fmt.Sprintf("XBackend %s: %s", v.Name, message), "")
}

// Config is what judging reads of the control plane's options.
type Config struct {
	// SystemCABundlePath is the file, on the Envoy host, that System
	// trust (and validation left out) trusts.
	SystemCABundlePath string
	// AllowInsecureSkipVerify honours tlsplane.io/insecureSkipVerify.
	AllowInsecureSkipVerify bool
	// CRLFetch honours tlsplane.io/crlDistributionPoints.
	CRLFetch bool
	// Hostnames are the external hostnames XBackends may name; nil: any.
	Hostnames *Hostnames
}

// Judge decides an XBackend: its destination and protocol, then its TLS.
func Judge(x *gwxv1a1.XBackend, ix *input.Index, cfg Config, m backendtls.Memos) *Verdict {
	v := &Verdict{Backend: x, Name: input.NameOf(x.Namespace, x.Name), Port: int32(x.Spec.Port.Port), Mode: gwxv1a1.BackendTLSModeNone}
	if x.Spec.Protocol != nil {
		v.Protocol = *x.Spec.Protocol
	}
	if x.Spec.TLS != nil && x.Spec.TLS.Mode != "" {
		v.Mode = x.Spec.TLS.Mode
	}
	v.judgeDestination(x, cfg.Hostnames)
	switch v.Protocol {
	case "", gwxv1a1.BackendProtocolHTTP, gwxv1a1.BackendProtocolHTTP11, gwxv1a1.BackendProtocolHTTP2,
		gwxv1a1.BackendProtocolGRPC, gwxv1a1.BackendProtocolMCP, gwxv1a1.BackendProtocolTCP:
	case gwxv1a1.BackendProtocolH2C:
		if v.Mode != gwxv1a1.BackendTLSModeNone {
			v.Reject(ReasonInvalid, fmt.Sprintf("spec.protocol: %q is plaintext HTTP/2, but spec.tls.mode is %q", v.Protocol, v.Mode))
		}
	default:
		v.Reject(ReasonInvalid, fmt.Sprintf("spec.protocol: %q is not a protocol tlsplane knows", v.Protocol))
	}
	switch v.Mode {
	case gwxv1a1.BackendTLSModeNone:
		if x.Spec.TLS != nil && x.Spec.TLS.ClientCertificateRef != nil {
			v.Reject(ReasonInvalid, "spec.tls.clientCertificateRef: set, but spec.tls.mode is \"None\" (plaintext)")
		}
	case gwxv1a1.BackendTLSModeServerOnly, gwxv1a1.BackendTLSModeClientAndServer:
		v.judgeTLS(x, ix, cfg, m)
	default:
		v.Reject(ReasonInvalid, fmt.Sprintf("spec.tls.mode: %q is not None, ServerOnly or ClientAndServer", v.Mode))
	}
	return v
}

// judgeDestination checks type, hostname (against the operator's
// allow-list too) and port.
func (v *Verdict) judgeDestination(x *gwxv1a1.XBackend, allowed *Hostnames) {
	if x.Spec.Type != gwxv1a1.BackendTypeExternalHostname {
		v.Reject(ReasonInvalid, fmt.Sprintf("spec.type: %q is not supported, only %q", x.Spec.Type, gwxv1a1.BackendTypeExternalHostname))
		return
	}
	if x.Spec.ExternalHostname == nil || x.Spec.ExternalHostname.Hostname == "" {
		v.Reject(ReasonInvalid, "spec.externalHostname.hostname: required for type ExternalHostname")
		return
	}
	host := string(x.Spec.ExternalHostname.Hostname)
	v.Hostname = host
	switch trimmed := strings.TrimSuffix(strings.ToLower(host), "."); {
	case hostnameProblem(trimmed) != "":
		v.Reject(ReasonInvalid, fmt.Sprintf("spec.externalHostname.hostname: %q %s", host, hostnameProblem(trimmed)))
	case isLoopbackName(trimmed) && !allowed.Names(trimmed):
		v.Reject(ReasonInvalid, fmt.Sprintf("spec.externalHostname.hostname: %q is a loopback name (RFC 6761): it reaches the Envoy host itself; "+
			"only an operator's --xbackend-hostnames naming it allows it", host))
	case !allowed.Allows(trimmed):
		v.Reject(ReasonInvalid, fmt.Sprintf("spec.externalHostname.hostname: %q is not among the hostnames this control plane allows (%s %s)", host, allowed.Flag, allowed))
	}
	if v.Port < 1 || v.Port > 65535 {
		v.Reject(ReasonInvalid, fmt.Sprintf("spec.port.port: %d is not a port (1-65535)", v.Port))
	}
}

// hostnameProblem says why a hostname (lower case, no trailing dot) may
// not name an external backend: an IP address, or a name inside the
// cluster (GEP-4894: XBackends are outside it; Services reach what is
// inside).
func hostnameProblem(trimmed string) string {
	if _, err := netip.ParseAddr(strings.Trim(trimmed, "[]")); err == nil {
		return "is an IP address; an XBackend names a host by DNS"
	}
	if trimmed == "cluster.local" || strings.HasSuffix(trimmed, ".cluster.local") {
		return "is inside the cluster (.cluster.local); route to its Service instead"
	}
	return ""
}

// optionsOf are the tlsplane.io/ annotations: the XBackend's options
// (other annotations are another tool's, never counted as options).
func optionsOf(x *gwxv1a1.XBackend) map[string]string {
	var out map[string]string
	for k, val := range x.Annotations {
		if strings.HasPrefix(k, tlsopts.Prefix) {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = val
		}
	}
	return out
}

// judgeTLS resolves ServerOnly and ClientAndServer: options, trust, SNI
// and SANs, the client certificate.
func (v *Verdict) judgeTLS(x *gwxv1a1.XBackend, ix *input.Index, cfg Config, m backendtls.Memos) {
	spec := x.Spec.TLS
	opts, err := tlsopts.ParseWith(m.Options, optionsOf(x), cfg.AllowInsecureSkipVerify)
	if err != nil {
		v.Reject(ReasonInvalid, "metadata.annotations: "+err.Error())
	}
	// Options the spec has a field for are refused: one place says it.
	if err == nil && opts.ClientCertificateRef != "" {
		v.Reject(ReasonInvalid, fmt.Sprintf("metadata.annotations: option %s: an XBackend sets its client certificate in spec.tls.clientCertificateRef", tlsopts.ClientCertificateKey))
	}
	if err == nil && len(opts.ALPNProtocols) > 0 {
		v.Reject(ReasonInvalid, "metadata.annotations: option "+tlsopts.Prefix+"alpnProtocols: an XBackend's ALPN follows spec.protocol")
	}
	validation := spec.Validation
	// Validation left out (or naming no trust): the system bundle, and
	// the external hostname as SNI and SAN. Our choice: never no check.
	if len(validation.CACertificateRefs) == 0 && validation.WellKnownCACertificates == nil {
		system := gwv1.WellKnownCACertificatesSystem
		validation.WellKnownCACertificates = &system
	}
	if validation.Hostname == "" {
		validation.Hostname = gwv1.PreciseHostname(v.Hostname)
	}
	if !opts.InsecureSkipVerify {
		v.judgeTrust(validation, ix, cfg, m)
	}
	if ref := opts.CRLRef; err == nil && ref != nil && v.CA != nil {
		var problem string
		if v.CA, v.CRL, problem = backendtls.WithCRL(v.Name.Namespace, *ref, v.CA, ix); problem != "" {
			msg := "metadata.annotations: " + problem
			v.unresolved(backendtls.ReasonInvalidCRLRef, msg)
			v.Reject(ReasonInvalid, msg)
		}
	}
	if policy := opts.CRLDistributionPoints; err == nil && policy != "" && v.CA != nil {
		var problem string
		if v.CA, v.FetchedCRLs, problem = backendtls.WithFetchedCRLs(policy, opts.CRLDistributionPointURLs, cfg.CRLFetch, v.CA, ix); problem != "" {
			msg := "metadata.annotations: " + problem
			v.unresolved(backendtls.ReasonCRLUnavailable, msg)
			v.Reject(ReasonInvalid, msg)
		}
	}
	sans, sanErr := backendtls.SANs(validation)
	if sanErr != nil {
		v.Reject(ReasonInvalid, "spec.tls."+sanErr.Error())
	}
	if v.Mode == gwxv1a1.BackendTLSModeClientAndServer {
		v.judgeClientCertificate(spec.ClientCertificateRef, ix)
	} else if spec.ClientCertificateRef != nil {
		v.Reject(ReasonInvalid, fmt.Sprintf("spec.tls.clientCertificateRef: set, but spec.tls.mode is %q (no client certificate is presented)", v.Mode))
	}
	if !v.Accepted() {
		return
	}
	for _, prefix := range opts.SANURIPrefixes {
		sans = append(sans, plan.SANMatch{Kind: plan.SANURIPrefix, Value: prefix})
	}
	v.TLS = &plan.UpstreamTLS{SNI: string(validation.Hostname), SANs: sans, Params: opts}
	if v.CA != nil {
		v.TLS.CASecret = v.CA.SecretName
	}
	if v.ClientCert != nil {
		v.TLS.ClientCertificate = v.ClientCert.SecretName
	}
}

// judgeTrust resolves the CA references (backendtls's rules, reasons and
// messages) into the bundle.
func (v *Verdict) judgeTrust(validation gwv1.BackendTLSPolicyValidation, ix *input.Index, cfg Config, m backendtls.Memos) {
	trust := backendtls.ResolveTrust(v.Name.Namespace, validation, ix, cfg.SystemCABundlePath, m.CAs)
	if invalid := trust.Invalid(); invalid != "" {
		v.Reject(ReasonInvalid, "spec.tls."+invalid)
		return
	}
	for _, p := range trust.Problems {
		v.unresolved(string(p.Reason), "spec.tls.validation."+p.Message)
	}
	if trust.Bundle == nil {
		msgs := trust.ProblemMessages()
		for i := range msgs {
			msgs[i] = "spec.tls.validation." + msgs[i]
		}
		v.Reject(ReasonNoValidCACertificate, "no valid CA certificate: "+strings.Join(msgs, "; "))
		return
	}
	v.CA = trust.Bundle
}

// judgeClientCertificate resolves clientCertificateRef: a
// kubernetes.io/tls Secret of the XBackend's namespace.
func (v *Verdict) judgeClientCertificate(ref *gwv1.SecretObjectReference, ix *input.Index) {
	const field = "spec.tls.clientCertificateRef"
	if ref == nil {
		v.Reject(ReasonInvalid, field+": required with spec.tls.mode \"ClientAndServer\"")
		return
	}
	group, kind := input.GroupKind(ref.Group, ref.Kind, "Secret")
	if group != "" || kind != "Secret" {
		msg := fmt.Sprintf("%s: group %q kind %q is not supported, only core Secrets", field, group, kind)
		v.unresolved(ReasonInvalidKind, msg)
		v.Reject(ReasonInvalid, msg)
		return
	}
	if ref.Namespace != nil && input.NameOf(string(*ref.Namespace), "").Namespace != v.Name.Namespace {
		msg := fmt.Sprintf("%s: Secret %s/%s is in another namespace; an XBackend reads Secrets of its own", field, *ref.Namespace, ref.Name)
		v.unresolved(ReasonRefNotPermitted, msg)
		v.Reject(ReasonInvalid, msg)
		return
	}
	cert, problem := backendtls.ResolveClientCertificate(v.Name.Namespace, string(ref.Name), field, ix)
	if problem != "" {
		v.unresolved(ReasonInvalidCertificateRef, problem)
		v.Reject(ReasonInvalid, problem)
		return
	}
	v.ClientCert = cert
}
