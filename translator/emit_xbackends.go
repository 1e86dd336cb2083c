package translator

import (
	"reflect"
	"slices"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/envoy"
	"github.com/tlsplane/tlsplane/translator/gateway"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/xbackend"
)

// xbackendOutput is every XBackend judged and emitted: the verdicts (read
// for statuses), and the clusters and secrets of the accepted ones,
// which join the translation's (a fleet is served those its routes
// reach, snapshots' rule). XBackends are few: a change to one, or to an
// object one reads, judges and emits them all again.
type xbackendOutput struct {
	verdicts map[types.NamespacedName]*xbackend.Verdict
	clusters map[string]*clusterv3.Cluster
	secrets  map[string]*tlsv3.Secret
	// origins are the XBackend behind each cluster and secret: apart from
	// the policies' (Output.XBackendOrigins).
	origins    map[string][]types.NamespacedName
	namespaces map[string]string
	caNotAfter map[string]time.Time
	// noteDue is when an Accepted message's CA expiry warning next
	// changes, as of the last statuses (zero: never).
	noteDue time.Time
}

// emitXBackend builds an accepted verdict's secrets and clusters, budget
// (its XBackendTrafficPolicy's, nil without one) on those of HTTPRoutes and
// GRPCRoutes: routes retry HTTP requests only. What Envoy would refuse of
// its TLS or secrets rejects the XBackend (its routes' share is answered
// 500, never sent in plaintext); a cluster of one family Envoy would
// refuse fails closed.
func (e *emitter) emitXBackend(v *xbackend.Verdict, budget *plan.RetryBudget, out *xbackendOutput) {
	if !v.Accepted() {
		return
	}
	var secrets []*tlsv3.Secret
	if v.CA != nil {
		secret := envoy.CASecret(v.CA.CABundle)
		if err := e.caSecretRules(secret); err != nil {
			v.Reject(xbackend.ReasonNoValidCACertificate, "the CA bundle cannot be served: Envoy would reject its SDS secret "+secret.Name+": "+err.Error())
			return
		}
		secrets = append(secrets, secret)
	}
	if c := v.ClientCert; c != nil {
		secret := envoy.CertificateSecret(c.SecretName, c.Chain, c.Key)
		if err := e.clientCertificateRules(c); err != nil {
			v.Reject(xbackend.ReasonInvalid, "spec.tls.clientCertificateRef: Envoy would reject the client certificate's SDS secret "+c.SecretName+": "+err.Error())
			return
		}
		secrets = append(secrets, secret)
	}
	if v.TLS != nil {
		// The family-free TLS first: what Envoy refuses there is the
		// XBackend's fault, not a family's.
		if _, err := envoy.UpstreamTLS(*v.TLS, e.httpOptions); err != nil {
			v.Reject(xbackend.ReasonInvalid, "Envoy would reject the TLS settings: "+err.Error())
			return
		}
	}
	var clusters []*clusterv3.Cluster
	for _, c := range v.Clusters() {
		var tls envoy.ClusterTLS
		switch {
		case c.TLS != nil:
			var err error
			if tls, err = envoy.UpstreamTLS(*c.TLS, e.httpOptions); err != nil {
				tls = e.parts.FailClosed
			}
		case c.H2C:
			tls = e.parts.H2C
		}
		if c.Family != xbackend.FamilyRaw {
			c.Plan.RetryBudget = budget
		}
		cluster, err := envoy.Cluster(c.Plan, tls, e.parts)
		if err != nil {
			v.Reject(xbackend.ReasonInvalid, "Envoy would reject cluster "+c.Plan.Name+": "+err.Error())
			return
		}
		clusters = append(clusters, cluster)
	}
	for _, c := range clusters {
		out.clusters[c.Name] = c
		out.namespaces[c.Name] = v.Name.Namespace
		out.origin(c.Name, v.Name)
	}
	for _, s := range secrets {
		if out.secrets[s.Name] == nil {
			out.secrets[s.Name] = s
		}
		out.origin(s.Name, v.Name)
	}
	if v.CA != nil && !v.CA.NotAfter.IsZero() {
		out.caNotAfter[v.CA.SecretName] = v.CA.NotAfter
	}
}

func (o *xbackendOutput) origin(resource string, x types.NamespacedName) {
	if !slices.Contains(o.origins[resource], x) {
		o.origins[resource] = append(o.origins[resource], x)
		slices.SortFunc(o.origins[resource], func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	}
}

// statuses are the XBackends' statuses: those a Gateway's accepted
// routes name, and those still carrying an entry of ours (to clear it);
// nil without XBackends.
// They note in o.noteDue the first time after now that an Accepted
// message's CA expiry warning changes (zero: never).
func (o *xbackendOutput) statuses(judged *gateway.Result, controller gwv1.GatewayController, stamp metav1.Time,
	now time.Time, warning time.Duration) map[types.NamespacedName]gwxv1a1.BackendStatus {
	o.noteDue = time.Time{}
	if len(o.verdicts) == 0 {
		return nil
	}
	reach := judged.XBackendReach()
	out := map[types.NamespacedName]gwxv1a1.BackendStatus{}
	for nn, v := range o.verdicts {
		gws := reach[nn]
		if len(gws) == 0 && !hasOurParent(v.Backend.Status, controller) {
			continue
		}
		out[nn] = xbackend.Status(v, gws, v.Backend.Status, controller, stamp, v.ExpiryNote(now, warning))
		if at := v.ExpiryChanges(now, warning); !at.IsZero() && (o.noteDue.IsZero() || at.Before(o.noteDue)) {
			o.noteDue = at
		}
	}
	return out
}

func hasOurParent(st gwxv1a1.BackendStatus, controller gwv1.GatewayController) bool {
	for _, p := range st.Ancestors {
		if p.ControllerName == controller {
			return true
		}
	}
	return false
}

// sameXBackendStatus: nothing to write again.
func sameXBackendStatus(a, b gwxv1a1.BackendStatus) bool { return reflect.DeepEqual(a, b) }
