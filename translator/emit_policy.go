package translator

import (
	"time"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/envoy"
	"github.com/tlsplane/tlsplane/translator/fleet"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// emitter is what a policy's and a port's Envoy resources are made with:
// the parts every cluster shares, and the memos of the emitter.
type emitter struct {
	parts *envoy.Parts
	// caSecretRules are what a CA secret must pass to be served: Envoy's
	// (ValidateAll). No parsed CA breaks them today; a test sets others.
	caSecretRules func(*tlsv3.Secret) error
	// clientCertificateRules are what a Gateway's backend client
	// certificate must pass to be presented: Envoy's
	// (envoy.ClientCertificateSecret). A test sets others.
	clientCertificateRules func(*plan.ClientCertificate) error
	httpOptions            *envoy.HTTPOptionsMemo
	// traffic is the call's XBackendTrafficPolicies judged: the retry
	// budgets of Service ports, the sessions of route tables.
	traffic traffic
	// certificateLog is every Gateway listener's certificate log (the
	// options'); nil when off.
	certificateLog *plan.CertificateLog
}

// fleetEmitter is what the Gateway fleets' own clusters are emitted with.
func (e *emitter) fleetEmitter() fleet.Emitter {
	return fleet.Emitter{Parts: e.parts, HTTPOptions: e.httpOptions}
}

// governor is a judged policy with what the emitter made of it: the
// pieces every port it governs shares, by pointer.
type governor struct {
	verdict *backendtls.Verdict
	// tls is an accepted policy's packed cluster TLS.
	tls envoy.ClusterTLS
	// secrets are an accepted policy's SDS secrets, shared read-only by
	// every port it governs: the CA bundle (unless validation is off),
	// then the client certificate, if any.
	secrets []*tlsv3.Secret
	// grpc is tls offering ALPN h2 alone, for GRPCRoutes' clusters; made
	// on first use (grpcMade), as few policies govern gRPC backends.
	grpc envoy.ClusterTLS
	// grpcPlan is grpc's plan; nil when grpc fails closed.
	grpcPlan *plan.UpstreamTLS
	grpcMade bool
}

// grpcTLS is g's TLS for a GRPCRoute's cluster: the policy's, offering h2
// alone, whatever its ALPN option says (gRPC is HTTP/2). What Envoy would
// refuse there it refused in the policy's own TLS already, so an error
// here fails the cluster closed.
func (e *emitter) grpcTLS(g *governor) envoy.ClusterTLS {
	if !g.grpcMade {
		p := g.verdict.TLS
		p.Params.ALPNProtocols = []string{"h2"}
		tls, err := envoy.UpstreamTLS(p, e.httpOptions)
		g.grpcPlan = &p
		if err != nil {
			tls, g.grpcPlan = e.parts.FailClosed, nil
		}
		g.grpc, g.grpcMade = tls, true
	}
	return g.grpc
}

// notAfter is when the CA in secret expires: zero for other secrets and
// for the system bundle.
func (g *governor) notAfter(secret string) time.Time {
	if b := g.verdict.Trust.Bundle; b != nil && secret == b.SecretName {
		return b.NotAfter
	}
	return time.Time{}
}

// emitPolicy emits an accepted verdict's TLS and CA secret. What Envoy
// would refuse comes back onto the verdict as a rejection, before anyone
// reads it, so the policy's ports fail closed and its status says why.
func (e *emitter) emitPolicy(v *backendtls.Verdict) *governor {
	g := &governor{verdict: v}
	if !v.Accepted() {
		return g
	}
	// Options are checked against Envoy by tlsopts.Parse; this catches
	// what slipped through, before Envoy would NACK it.
	tls, err := envoy.UpstreamTLS(v.TLS, e.httpOptions)
	if err != nil {
		v.Reject(gwv1.PolicyReasonInvalid, "Envoy would reject the TLS settings: "+err.Error())
		return g
	}
	var secrets []*tlsv3.Secret
	if !v.TLS.Params.InsecureSkipVerify {
		secret := envoy.CASecret(v.Trust.Bundle.CABundle)
		if err := e.caSecretRules(secret); err != nil {
			v.RejectUnservableCA(secret.Name, err)
			return g
		}
		secrets = append(secrets, secret)
	}
	if c := v.ClientCert; c != nil {
		secret := envoy.CertificateSecret(c.SecretName, c.Chain, c.Key)
		if err := secret.ValidateAll(); err != nil {
			v.Reject(gwv1.PolicyReasonInvalid, "Envoy would reject the client certificate's SDS secret "+c.SecretName+": "+err.Error())
			return g
		}
		secrets = append(secrets, secret)
	}
	g.tls, g.secrets = tls, secrets
	return g
}
