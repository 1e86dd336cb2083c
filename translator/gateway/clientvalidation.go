package gateway

import (
	"fmt"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/gatewaytls"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// judgeClientValidation applies the Gateway's frontend validation to an
// HTTPS listener: an invalid ref makes its ResolvedRefs False; no valid
// one leaves it not accepted (NoValidCACertificate), so never served
// without the validation it asks for.
func judgeClientValidation(l *gwv1.Listener, s *listenerState, f *gatewaytls.Frontend) {
	v := f.ForPort(l.Port)
	if v == nil {
		return
	}
	if v.Reason != "" {
		s.caReason, s.caMsg = string(v.Reason), fmt.Sprintf("listener %s: %s", l.Name, v.Message)
	}
	if v.Bundle == nil {
		s.accepted = false
		s.acceptedReason = string(gwv1.ListenerReasonNoValidCACertificate)
		s.acceptedMsg = fmt.Sprintf("listener %s: no caCertificateRef of its client certificate validation can be used; see ResolvedRefs", l.Name)
		return
	}
	s.frontend = v
}

// clientValidation is the listener's chain's client certificate
// validation; nil for none.
func (l *listenerState) clientValidation() *plan.ClientValidation {
	if l.frontend == nil {
		return nil
	}
	return &plan.ClientValidation{CASecret: l.frontend.Bundle.SecretName, InsecureFallback: l.frontend.Insecure}
}

// ClientCA is the CA bundle of a chain's ClientValidation.CASecret.
func (gs *Gateway) ClientCA(secret string) plan.CABundle {
	for _, l := range gs.listeners {
		if l.frontend != nil && l.frontend.Bundle.SecretName == secret {
			return *l.frontend.Bundle
		}
	}
	return plan.CABundle{SecretName: secret}
}
