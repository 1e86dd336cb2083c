package translator_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// A Gateway's backend client certificate that goes missing, comes back and
// is rotated: after each Update, the Output equals a fresh translation of
// the same objects, and a publisher accepts it (the fleet's own clusters
// and the certificate's secret agree). The fleet's cluster fails closed
// while the Secret is missing and presents the certificate again after.
func TestGatewayClientCertificateFollowsItsSecret(t *testing.T) {
	in, err := manifests.Unadmitted.Read([]string{goldenDir + "/gateway-backend-client-certificate.in.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: "shop", Name: "envoy-client"}
	now := time.Now()
	tr := translator.New()
	out := tr.Translate(in, nil, now, translator.Options{})
	p := snapshots.New(snapshots.Options{})
	if _, err := p.Publish(out); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name   string
		secret *corev1.Secret // nil: deleted
		want   int            // the fleet's secrets reading GatewayClient/shop/edge
	}{
		{"deleted", nil, 0},
		{"created again", translatortest.TLSSecret(t, "shop", "envoy-client", "envoy-client.shop"), 1},
		{"rotated", translatortest.TLSSecret(t, "shop", "envoy-client", "envoy-client-rotated.shop"), 1},
	}
	for _, step := range steps {
		change := translator.Change{Kind: translator.KindSecret, Key: key, Object: step.secret}
		if step.secret == nil {
			change.Object = (*corev1.Secret)(nil)
		}
		replaced := in
		replaced.Secrets = nil
		for _, s := range in.Secrets {
			if s.Namespace != key.Namespace || s.Name != key.Name {
				replaced.Secrets = append(replaced.Secrets, s)
			}
		}
		if step.secret != nil {
			replaced.Secrets = append(replaced.Secrets, step.secret)
		}
		got := updateMatchesTranslate(t, step.name, tr, p, change, replaced, now)
		secrets := 0
		for _, s := range got.Fleets["shop/edge"].Secrets {
			if s.Name == "GatewayClient/shop/edge" {
				secrets++
			}
		}
		if secrets != step.want {
			t.Errorf("%s: fleet shop/edge is served GatewayClient/shop/edge %d times, want %d", step.name, secrets, step.want)
		}
	}
}

// A backend client certificate Envoy would reject is the Gateway's status,
// naming the field, the Secret and why, and the TLS backends its routes
// reach fail closed: never a dropped error, never a cluster without the
// certificate.
func TestGatewayClientCertificateEnvoyWouldRejectIsStatus(t *testing.T) {
	in, err := manifests.Unadmitted.Read([]string{goldenDir + "/gateway-backend-client-certificate.in.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	refuse := func(c *plan.ClientCertificate) error { return errors.New("test: refused " + c.SecretName) }
	now := time.Now()
	tr := translator.NewWithClientCertificateRules(refuse)
	out := tr.Translate(in, nil, now, translator.Options{})
	gw := types.NamespacedName{Namespace: "shop", Name: "edge"}
	st, ok := out.GatewayAPI.Gateways[gw]
	if !ok {
		t.Fatalf("no status for Gateway %s", gw)
	}
	c := meta.FindStatusCondition(st.Conditions, string(gwv1.GatewayConditionResolvedRefs))
	want := "spec.tls.backend.clientCertificateRef: Secret shop/envoy-client: Envoy would reject it: test: refused GatewayClient/shop/edge"
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(gwv1.GatewayReasonInvalidClientCertificateRef) || !strings.HasPrefix(c.Message, want) {
		t.Fatalf("Gateway %s ResolvedRefs = %+v, want False %s %q…", gw, c, gwv1.GatewayReasonInvalidClientCertificateRef, want)
	}
	fleet := out.Fleets["shop/edge"]
	if len(fleet.Clusters) == 0 {
		t.Fatalf("fleet shop/edge has no own clusters: its TLS backends would be reached without the certificate")
	}
	for _, s := range fleet.Secrets {
		if s.Name == "GatewayClient/shop/edge" {
			t.Errorf("fleet shop/edge is served the refused certificate's secret %s", s.Name)
		}
	}
	failClosed := translator.Translate(in, nil, now, translator.Options{}).Clusters
	for _, own := range fleet.Clusters {
		if sds := own.GetTransportSocket().GetTypedConfig(); sds == nil {
			t.Errorf("fleet shop/edge cluster %s has no TLS: it must fail closed", own.Name)
		}
		for _, base := range failClosed {
			if base.Name == own.Name && proto.Equal(base, own) {
				t.Errorf("fleet shop/edge cluster %s is served as every other fleet's: it must fail closed", own.Name)
			}
		}
	}
}
