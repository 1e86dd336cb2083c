package translator_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// A Gateway's backend client certificate that goes missing, comes back and
// is rotated: after each Update, the Output equals a fresh translation of
// the same objects, and a publisher accepts it (the fleet's own clusters
// and the certificate's secret agree). The fleet's cluster fails closed
// while the Secret is missing and presents the certificate again after.
func TestGatewayClientCertificateFollowsItsSecret(t *testing.T) {
	in, err := manifests.Read([]string{goldenDir + "/gateway-backend-client-certificate.in.yaml"}, nil)
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
