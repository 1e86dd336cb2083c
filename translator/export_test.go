package translator

import (
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/trafficpolicy"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// Test CAs for the external tests.
const (
	TestCA  = translatortest.CA
	TestCA2 = translatortest.CA2
)

// EnvoyBinary is the Envoy the external tests validate configuration with.
var EnvoyBinary = translatortest.EnvoyBinary

// NewWithCASecretRules is New with rules a CA secret must pass in place of
// Envoy's: no CA that parses breaks Envoy's rules today, and a test needs
// one that does.
func NewWithCASecretRules(rules func(*tlsv3.Secret) error) *Translator {
	t := New()
	t.caSecretRules = rules
	return t
}

// NewWithClientCertificateRules is New with rules a Gateway's backend
// client certificate must pass in place of Envoy's: no certificate that
// parses breaks Envoy's rules today, and a test needs one that does.
func NewWithClientCertificateRules(rules func(*plan.ClientCertificate) error) *Translator {
	t := New()
	t.clientCertificateRules = rules
	return t
}

// TrafficPlans is what the engine makes of in's XBackendTrafficPolicies:
// the routes' sessions by cluster name, and each Service's retry budget.
func TrafficPlans(in Inputs) (map[string]*plan.Session, func(types.NamespacedName) *plan.RetryBudget) {
	tr := judgeTraffic(in.XBackendTrafficPolicies, input.NewIndex(in))
	return tr.sessions, func(nn types.NamespacedName) *plan.RetryBudget {
		return tr.retryBudgetOf(trafficpolicy.ServiceTarget(nn))
	}
}
