package translator_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
)

// The ca-configmap case's CA expires at this instant.
var caConfigMapNotAfter = time.Date(2126, 10, 29, 7, 30, 13, 0, time.UTC)

// An accepted policy's Accepted message warns within the window before
// its CA expires and after it expired; a Translator that reuses its
// statuses still follows the clock.
func TestCAExpiryWarning(t *testing.T) {
	in := readCase(t, "ca-configmap")
	nn := types.NamespacedName{Namespace: "shop", Name: "pay-tls"}
	tr := translator.New()
	tests := []struct {
		name string
		now  time.Time
		opts translator.Options
		want string // "" : no warning
	}{
		{"a century before", goldenNow, translator.Options{}, ""},
		{"31 days before", caConfigMapNotAfter.Add(-31 * 24 * time.Hour), translator.Options{}, ""},
		{"29 days before", caConfigMapNotAfter.Add(-29 * 24 * time.Hour), translator.Options{},
			"Policy is accepted; warning: a CA certificate in ConfigMap shop/pay-ca expires at 2126-10-29T07:30:13Z, within 720h0m0s"},
		{"29 days before, a 7-day window", caConfigMapNotAfter.Add(-29 * 24 * time.Hour), translator.Options{CAExpiryWarning: 7 * 24 * time.Hour}, ""},
		{"after expiry", caConfigMapNotAfter.Add(time.Second), translator.Options{},
			"Policy is accepted; warning: a CA certificate in ConfigMap shop/pay-ca expired at 2126-10-29T07:30:13Z: handshakes with certificates it issued fail"},
		{"after expiry, warnings off", caConfigMapNotAfter.Add(time.Second), translator.Options{CAExpiryWarning: -1}, ""},
	}
	var previous translator.PreviousStatus
	for _, tc := range tests {
		out := tr.Translate(in, previous, tc.now, tc.opts)
		previous = translator.PreviousStatus{nn: out.Statuses[nn]}
		accepted := out.Statuses[nn].Ancestors[0].Conditions[0]
		if accepted.Type != "Accepted" || accepted.Status != "True" {
			t.Fatalf("%s: %+v, want Accepted True", tc.name, accepted)
		}
		switch {
		case tc.want == "" && strings.Contains(accepted.Message, "warning"):
			t.Errorf("%s: unexpected warning %q", tc.name, accepted.Message)
		case tc.want != "" && accepted.Message != tc.want:
			t.Errorf("%s: message\n %q, want\n %q", tc.name, accepted.Message, tc.want)
		}
		if got := out.CANotAfter["CA/shop/configmap/pay-ca"]; !got.Equal(caConfigMapNotAfter) {
			t.Errorf("%s: CANotAfter = %v, want %v for CA/shop/configmap/pay-ca (%v)", tc.name, got, caConfigMapNotAfter, out.CANotAfter)
		}
	}
}

// An accepted XBackend's Accepted message warns of its CA's expiry like a
// policy's; an Update with nothing changed follows the clock across the
// window's start and the expiry.
func TestXBackendCAExpiryWarning(t *testing.T) {
	in := readCase(t, "xbackend-server-only")
	nn := types.NamespacedName{Namespace: "shop", Name: "payments"}
	out := translator.Translate(in, nil, goldenNow, translator.Options{})
	notAfter := out.CANotAfter["CA/shop/configmap/payments-ca"]
	if notAfter.IsZero() {
		t.Fatalf("no CANotAfter for the XBackend's CA: %v", out.CANotAfter)
	}
	accepted := func(out translator.Output) string {
		t.Helper()
		st, ok := out.GatewayAPI.XBackends[nn]
		if !ok || len(st.Ancestors) == 0 || st.Ancestors[0].Conditions[0].Type != "Accepted" || st.Ancestors[0].Conditions[0].Status != "True" {
			t.Fatalf("XBackend %s: status %+v, want an accepted parent", nn, st)
		}
		return st.Ancestors[0].Conditions[0].Message
	}
	if msg := accepted(out); strings.Contains(msg, "warning") {
		t.Fatalf("a century before expiry: %q", msg)
	}

	tr := translator.New()
	tr.Translate(in, nil, notAfter.Add(-31*24*time.Hour), translator.Options{})
	for _, step := range []struct {
		name string
		now  time.Time
		want string
	}{
		{"30 days before", notAfter.Add(-30*24*time.Hour + time.Minute), "; warning: a CA certificate in ConfigMap shop/payments-ca expires at " + notAfter.UTC().Format(time.RFC3339) + ", within 720h0m0s"},
		{"after expiry", notAfter.Add(time.Second), "; warning: a CA certificate in ConfigMap shop/payments-ca expired at " + notAfter.UTC().Format(time.RFC3339) + ": handshakes with certificates it issued fail"},
	} {
		out, ok := tr.Update(nil, nil, step.now, translator.Options{})
		if !ok {
			t.Fatalf("%s: Update refused", step.name)
		}
		if msg := accepted(out); !strings.HasSuffix(msg, step.want) {
			t.Errorf("%s: Accepted message %q, want it to end with %q", step.name, msg, step.want)
		}
	}
	if msg := accepted(translator.Translate(in, nil, notAfter.Add(time.Second), translator.Options{CAExpiryWarning: -1})); strings.Contains(msg, "warning") {
		t.Errorf("warnings off: %q", msg)
	}
}
