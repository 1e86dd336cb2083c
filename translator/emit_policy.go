package translator

import (
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/envoy"
)

// governor is a judged policy with what the emitter made of it: the
// pieces every port it governs shares, by pointer.
type governor struct {
	verdict *backendtls.Verdict
	// tls is an accepted policy's packed cluster TLS.
	tls envoy.ClusterTLS
	// secret is the CA secret of an accepted policy that validates
	// certificates.
	secret *tlsv3.Secret
}

// emitPolicy emits an accepted verdict's TLS and CA secret. What Envoy
// would refuse comes back onto the verdict as a rejection, before anyone
// reads it, so the policy's ports fail closed and its status says why.
func (t *Translator) emitPolicy(v *backendtls.Verdict) *governor {
	g := &governor{verdict: v}
	if !v.Accepted() {
		return g
	}
	// Options are checked against Envoy by tlsopts.Parse; this catches
	// what slipped through, before Envoy would NACK it.
	tls, err := envoy.UpstreamTLS(v.TLS, t.memos.httpOptions)
	if err != nil {
		v.Reject(gwv1.PolicyReasonInvalid, "Envoy would reject the TLS settings: "+err.Error())
		return g
	}
	if !v.TLS.Params.InsecureSkipVerify {
		secret := envoy.CASecret(v.Trust.Bundle.CABundle)
		if err := t.caSecretRules(secret); err != nil {
			v.RejectUnservableCA(secret.Name, err)
			return g
		}
		g.secret = secret
	}
	g.tls = tls
	return g
}
