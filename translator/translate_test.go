package translator_test

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/document"
)

func readCase(t *testing.T, name string) translator.Inputs {
	t.Helper()
	in, err := manifests.Unadmitted.Read([]string{filepath.Join(goldenDir, name+".in.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func render(t *testing.T, in translator.Inputs, out translator.Output) []byte {
	t.Helper()
	doc, err := document.Render(in, out, document.FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// The same objects in any order give the same bytes, for every golden case.
func TestTranslateIgnoresInputOrder(t *testing.T) {
	inputs, _ := filepath.Glob(filepath.Join(goldenDir, "*.in.yaml"))
	rng := rand.New(rand.NewPCG(1, 2))
	for _, path := range inputs {
		name := strings.TrimSuffix(filepath.Base(path), ".in.yaml")
		in := readCase(t, name)
		want := render(t, in, translator.Translate(in, nil, goldenNow, translator.Options{}))
		for range 10 {
			s := in
			s.Policies = shuffled(rng, in.Policies)
			s.Services = shuffled(rng, in.Services)
			s.EndpointSlices = shuffled(rng, in.EndpointSlices)
			s.ConfigMaps = shuffled(rng, in.ConfigMaps)
			s.Secrets = shuffled(rng, in.Secrets)
			if got := render(t, s, translator.Translate(s, nil, goldenNow, translator.Options{})); !bytes.Equal(got, want) {
				t.Fatalf("%s: output depends on input order", name)
			}
		}
	}
}

func shuffled[T any](rng *rand.Rand, in []T) []T {
	out := append([]T(nil), in...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// Rotating a CA changes the secret only; the cluster stays byte-identical.
func TestCARotationChangesOnlyTheSecret(t *testing.T) {
	in := readCase(t, "ca-configmap")
	before := translator.Translate(in, nil, goldenNow, translator.Options{})
	rotated := readCase(t, "ca-several-refs-one-invalid") // holds a second CA
	cm := in.ConfigMaps[0].DeepCopy()
	cm.Data["ca.crt"] = string(rotated.Secrets[0].Data["ca.crt"])
	in.ConfigMaps = []*corev1.ConfigMap{cm}
	after := translator.Translate(in, nil, goldenNow, translator.Options{})
	if len(before.Clusters) != 1 || !proto.Equal(before.Clusters[0], after.Clusters[0]) {
		t.Errorf("the cluster changed with the CA content")
	}
	if proto.Equal(before.Secrets[0], after.Secrets[0]) {
		t.Errorf("the secret did not change with the CA content")
	}
	if before.Secrets[0].Name != after.Secrets[0].Name {
		t.Errorf("secret name changed: %s -> %s", before.Secrets[0].Name, after.Secrets[0].Name)
	}
}

// A port whose policy is not accepted keeps TLS that references no SDS
// secret and trusts only the fail-closed CA; it is never plaintext.
func TestNotAcceptedPolicyFailsClosed(t *testing.T) {
	for _, name := range []string{"ca-missing-configmap", "ca-missing-key", "ca-empty", "ca-garbage-pem", "ca-invalid-kind", "wellknown-unknown", "options-invalid"} {
		in := readCase(t, name)
		out := translator.Translate(in, nil, goldenNow, translator.Options{})
		if len(out.Clusters) == 0 || len(out.Secrets) != 0 {
			t.Fatalf("%s: %d clusters, %d secrets; want clusters and no secret", name, len(out.Clusters), len(out.Secrets))
		}
		for _, c := range out.Clusters {
			ts := c.GetTransportSocket()
			if ts == nil {
				t.Fatalf("%s: cluster %s is plaintext", name, c.Name)
			}
			ctx := &tlsv3.UpstreamTlsContext{}
			if err := ts.GetTypedConfig().UnmarshalTo(ctx); err != nil {
				t.Fatal(err)
			}
			vc := ctx.GetCommonTlsContext().GetValidationContext()
			sans := vc.GetMatchTypedSubjectAltNames()
			if vc.GetTrustedCa().GetInlineString() == "" || len(sans) != 1 || !strings.HasSuffix(sans[0].GetMatcher().GetExact(), ".invalid") {
				t.Errorf("%s: cluster %s does not fail closed: %v", name, c.Name, ctx)
			}
		}
	}
}

// lastTransitionTime moves only when a condition's status changes.
func TestStatusTransitionTimes(t *testing.T) {
	in := readCase(t, "ca-configmap")
	nn := types.NamespacedName{Namespace: "shop", Name: "pay-tls"}
	t1, t2, t3 := goldenNow, goldenNow.Add(time.Hour), goldenNow.Add(2*time.Hour)

	first := translator.Translate(in, nil, t1, translator.Options{})
	same := translator.Translate(in, translator.PreviousStatus{nn: first.Statuses[nn]}, t2, translator.Options{})
	assertTransition(t, same.Statuses[nn], "Accepted", metav1.ConditionTrue, t1)

	broken := in
	broken.ConfigMaps = nil
	second := translator.Translate(broken, translator.PreviousStatus{nn: same.Statuses[nn]}, t2, translator.Options{})
	assertTransition(t, second.Statuses[nn], "Accepted", metav1.ConditionFalse, t2)
	assertTransition(t, second.Statuses[nn], "ResolvedRefs", metav1.ConditionFalse, t2)

	third := translator.Translate(broken, translator.PreviousStatus{nn: second.Statuses[nn]}, t3, translator.Options{})
	assertTransition(t, third.Statuses[nn], "Accepted", metav1.ConditionFalse, t2)
}

func assertTransition(t *testing.T, st gwv1.PolicyStatus, condition string, status metav1.ConditionStatus, at time.Time) {
	t.Helper()
	if len(st.Ancestors) != 1 {
		t.Fatalf("%d ancestors, want 1", len(st.Ancestors))
	}
	for _, c := range st.Ancestors[0].Conditions {
		if c.Type == condition {
			if c.Status != status || !c.LastTransitionTime.Time.Equal(at) {
				t.Errorf("%s = %s since %s, want %s since %s", condition, c.Status, c.LastTransitionTime.UTC(), status, at)
			}
			return
		}
	}
	t.Errorf("no %s condition", condition)
}

// Other controllers' entries are kept; ours fill the room left of 16.
func TestStatusKeepsOtherControllersWithinSixteen(t *testing.T) {
	in := readCase(t, "subject-alt-names")
	p := in.Policies[0]
	nn := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	var prev gwv1.PolicyStatus
	for i := range 16 {
		name := gwv1.ObjectName("gw-" + string(rune('a'+i)))
		prev.Ancestors = append(prev.Ancestors, gwv1.PolicyAncestorStatus{
			AncestorRef:    gwv1.ParentReference{Name: name},
			ControllerName: "example.com/other",
		})
	}
	out := translator.Translate(in, translator.PreviousStatus{nn: prev}, goldenNow, translator.Options{})
	got := out.Statuses[nn]
	if len(got.Ancestors) != 16 {
		t.Fatalf("%d ancestors, want 16", len(got.Ancestors))
	}
	for i, a := range got.Ancestors {
		if a.ControllerName != "example.com/other" || a.AncestorRef.Name != prev.Ancestors[i].AncestorRef.Name {
			t.Errorf("ancestor %d = %s %s, want the other controller's entry kept", i, a.ControllerName, a.AncestorRef.Name)
		}
	}
	prev.Ancestors = prev.Ancestors[:3]
	out = translator.Translate(in, translator.PreviousStatus{nn: prev}, goldenNow, translator.Options{})
	if n := len(out.Statuses[nn].Ancestors); n != 4 || out.Statuses[nn].Ancestors[3].ControllerName != translator.DefaultControllerName {
		t.Errorf("got %d ancestors (last %s), want the 3 others then ours", n, out.Statuses[nn].Ancestors[n-1].ControllerName)
	}
}

// Origins name the policies behind each cluster and secret.
func TestOrigins(t *testing.T) {
	in := readCase(t, "subject-alt-names")
	out := translator.Translate(in, nil, goldenNow, translator.Options{})
	secret := out.Origins["CA/shop/configmap/pay-ca"]
	if len(secret) != 4 || secret[0].Name != "both-sans" || secret[3].Name != "uri-san" {
		t.Errorf("secret origins = %v, want the 4 policies sorted", secret)
	}
	if got := out.Origins["shop/b/443"]; len(got) != 1 || got[0].Name != "dns-san" {
		t.Errorf("cluster origins = %v, want shop/dns-san", got)
	}
}
