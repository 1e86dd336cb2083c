package translator_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// Oversized inputs: the directory source has no CRD validation and no
// object size limit, so the translator alone decides what happens to a
// CA bundle of many megabytes, thousands of SANs or a 64 KiB option value.
// Each must end in a status that says what is wrong (or in an output that
// is complete and valid), within bounded time and memory.

const mib = 1 << 20

// oversizeTimeLimit is generous: the machine running the tests is shared.
const oversizeTimeLimit = 60 * time.Second

// oversizeInputs is one Service pay/https, a policy targeting it with the
// CA ConfigMap pay-ca, and whatever edit changes.
func oversizeInputs(caData []byte, edit func(*gwv1.BackendTLSPolicy)) translator.Inputs {
	p := &gwv1.BackendTLSPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "pay-tls", Namespace: "shop", Generation: 1},
		Spec: gwv1.BackendTLSPolicySpec{
			TargetRefs: []gwv1.LocalPolicyTargetReferenceWithSectionName{{
				LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{Kind: "Service", Name: "pay"},
			}},
			Validation: gwv1.BackendTLSPolicyValidation{
				Hostname:          "pay.shop.example",
				CACertificateRefs: []gwv1.LocalObjectReference{{Kind: "ConfigMap", Name: "pay-ca"}},
			},
		},
	}
	if edit != nil {
		edit(p)
	}
	return translator.Inputs{
		Policies: []*gwv1.BackendTLSPolicy{p},
		Services: []*corev1.Service{{
			ObjectMeta: metav1.ObjectMeta{Name: "pay", Namespace: "shop"},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}},
		}},
		ConfigMaps: []*corev1.ConfigMap{{
			ObjectMeta: metav1.ObjectMeta{Name: "pay-ca", Namespace: "shop"},
			Data:       map[string]string{"ca.crt": string(caData)},
		}},
	}
}

// measured is one translation and what it cost.
type measured struct {
	out       translator.Output
	took      time.Duration
	allocated uint64 // bytes allocated during the translation
}

func translateMeasured(in translator.Inputs, opts translator.Options) measured {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	out := translator.Translate(in, nil, fuzzNow, opts)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	return measured{out: out, took: took, allocated: after.TotalAlloc - before.TotalAlloc}
}

// checkBounded fails when a translation of an input of inputSize bytes
// took too long or allocated more than factor times the input.
func (m measured) checkBounded(t *testing.T, inputSize int, factor uint64) {
	t.Helper()
	t.Logf("input %d bytes: translated in %v, allocating %d bytes (%.1fx)", inputSize, m.took, m.allocated, float64(m.allocated)/float64(max(inputSize, 1)))
	if m.took > oversizeTimeLimit {
		t.Errorf("translation took %v, more than %v", m.took, oversizeTimeLimit)
	}
	if limit := factor*uint64(inputSize) + 4*mib; m.allocated > limit {
		t.Errorf("translation allocated %d bytes for an input of %d bytes, more than %d", m.allocated, inputSize, limit)
	}
}

// policyStatus is pay-tls's Accepted and ResolvedRefs conditions, checked
// to be short enough for the API server.
func policyStatus(t *testing.T, out translator.Output) (accepted, resolved metav1.Condition) {
	t.Helper()
	st, ok := out.Statuses[types.NamespacedName{Namespace: "shop", Name: "pay-tls"}]
	if !ok || len(st.Ancestors) == 0 {
		t.Fatalf("pay-tls has no status: %+v", out.Statuses)
	}
	for _, c := range st.Ancestors[0].Conditions {
		if len(c.Message) > translator.MaxConditionMessage {
			t.Errorf("condition %s: message of %d bytes, more than the API server's %d", c.Type, len(c.Message), translator.MaxConditionMessage)
		}
		switch c.Type {
		case "Accepted":
			accepted = c
		case "ResolvedRefs":
			resolved = c
		}
	}
	return accepted, resolved
}

// checkFailsClosed: pay's cluster is there and is TLS whatever happened.
func checkFailsClosed(t *testing.T, in translator.Inputs, out translator.Output) {
	t.Helper()
	fuzzCheckOutput(t, in, out)
	for _, c := range out.Clusters {
		if c.Name == "shop/pay/443" {
			if c.GetTransportSocket() == nil {
				t.Errorf("cluster %s is plaintext", c.Name)
			}
			return
		}
	}
	t.Errorf("no cluster shop/pay/443 (warnings %q)", out.Warnings)
}

func TestOversizedCABundle(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates hundreds of MiB; not with -short")
	}
	ca := fuzzGoldenCA(t)
	validPEM := bytes.Repeat(ca, 20*mib/len(ca)+1)
	garbage := make([]byte, 20*mib)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range garbage {
		garbage[i] = byte(r.Uint32())
	}
	// A certificate block whose body is 20 MiB of base64 that is not DER.
	hugeBlock := []byte("-----BEGIN CERTIFICATE-----\n" + strings.Repeat(strings.Repeat("QUFB", 16)+"\n", 20*mib/65) + "-----END CERTIFICATE-----\n")
	// 20 MiB of good certificates and then one bad block.
	badLast := append(bytes.Clone(validPEM), []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")...)

	tests := []struct {
		name string
		data []byte
		// mayAccept: the policy may be accepted; otherwise it must be
		// rejected with InvalidCACertificateRef. None may: each bundle is
		// over the 1 MiB a ConfigMap holds, valid certificates or not.
		mayAccept bool
		// factor bounds the allocations, times the input size.
		factor uint64
		// wantInMessage is part of the ResolvedRefs message.
		wantInMessage string
	}{
		{"20 MiB of PEM certificates", validPEM, false, 10, "more than the 1048576 a ConfigMap or Secret can hold"},
		{"20 MiB of random bytes", garbage, false, 10, "ConfigMap shop/pay-ca"},
		{"a 20 MiB PEM block that is not a certificate", hugeBlock, false, 10, "ConfigMap shop/pay-ca"},
		{"20 MiB of certificates and one bad block", badLast, false, 10, "ConfigMap shop/pay-ca"},
		// Just under the limit, the parser itself is what is bounded.
		{"1 MiB of PEM certificates", bytes.Repeat(ca, mib/len(ca)), true, 10, ""},
		{"1 MiB of random bytes", garbage[:mib], false, 10, "ConfigMap shop/pay-ca"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := oversizeInputs(tt.data, nil)
			m := translateMeasured(in, translator.Options{})
			m.checkBounded(t, len(tt.data), tt.factor)
			accepted, resolved := policyStatus(t, m.out)
			t.Logf("Accepted=%s %s: %.200s", accepted.Status, accepted.Reason, accepted.Message)
			t.Logf("ResolvedRefs=%s %s: %.200s", resolved.Status, resolved.Reason, resolved.Message)
			checkFailsClosed(t, in, m.out)
			if accepted.Status == metav1.ConditionTrue {
				if !tt.mayAccept {
					t.Fatalf("an invalid bundle was accepted")
				}
				var size int
				for _, s := range m.out.Secrets {
					size += len(s.GetValidationContext().GetTrustedCa().GetInlineString())
				}
				t.Logf("accepted: %d bytes of CA certificates go to Envoy in SDS secrets", size)
				return
			}
			if resolved.Status != metav1.ConditionFalse || resolved.Reason != string(gwv1.BackendTLSPolicyReasonInvalidCACertificateRef) ||
				!strings.Contains(resolved.Message, "ConfigMap shop/pay-ca") {
				t.Errorf("ResolvedRefs = %s %s %q, want False InvalidCACertificateRef naming ConfigMap shop/pay-ca", resolved.Status, resolved.Reason, resolved.Message)
			}
			if !strings.Contains(resolved.Message, tt.wantInMessage) {
				t.Errorf("ResolvedRefs message %.300q lacks %q", resolved.Message, tt.wantInMessage)
			}
			if accepted.Reason != string(gwv1.BackendTLSPolicyReasonNoValidCACertificate) {
				t.Errorf("Accepted reason = %s, want NoValidCACertificate", accepted.Reason)
			}
		})
	}
}

func TestThousandsOfSubjectAltNames(t *testing.T) {
	const n = 5000 // the CRD allows 5; the directory source checks nothing
	sans := make([]gwv1.SubjectAltName, n)
	size := 0
	for i := range sans {
		if i%2 == 0 {
			sans[i] = gwv1.SubjectAltName{Type: gwv1.HostnameSubjectAltNameType, Hostname: gwv1.Hostname(fmt.Sprintf("pay-%d.shop.example", i))}
		} else {
			sans[i] = gwv1.SubjectAltName{Type: gwv1.URISubjectAltNameType, URI: gwv1.AbsoluteURI(fmt.Sprintf("spiffe://shop.example/ns/shop/sa/pay-%d", i))}
		}
		size += len(sans[i].Hostname) + len(sans[i].URI)
	}
	in := oversizeInputs(fuzzGoldenCA(t), func(p *gwv1.BackendTLSPolicy) { p.Spec.Validation.SubjectAltNames = sans })
	m := translateMeasured(in, translator.Options{})
	// Each SAN becomes a matcher proto packed into the cluster's Any: a
	// few hundred bytes apiece is expected, not megabytes.
	m.checkBounded(t, size, 100)
	accepted, _ := policyStatus(t, m.out)
	t.Logf("Accepted=%s %s: %.200s", accepted.Status, accepted.Reason, accepted.Message)
	checkFailsClosed(t, in, m.out)
	if accepted.Status == metav1.ConditionTrue {
		// Accepted: then every SAN is checked, none silently dropped.
		got := 0
		for _, c := range m.out.Clusters {
			if c.Name == "shop/pay/443" {
				got = len(clusterSANMatchers(t, c))
			}
		}
		if got != n {
			t.Errorf("accepted with %d SANs, but the cluster matches %d", n, got)
		}
		t.Logf("accepted: the cluster matches all %d SANs (no limit in the translator)", got)
		return
	}
	if accepted.Reason != string(gwv1.PolicyReasonInvalid) || !strings.Contains(accepted.Message, "subjectAltNames") {
		t.Errorf("Accepted = %s %s %q, want Invalid naming subjectAltNames", accepted.Status, accepted.Reason, accepted.Message)
	}
}

func TestLargeOptionValue(t *testing.T) {
	big := strings.Repeat("ECDHE-ECDSA-AES128-GCM-SHA256,", 64*1024/30+1)[:64*1024]
	tests := []struct {
		name, key, value string
		wantInMessage    string
	}{
		{"64 KiB ciphers", "tlsplane.io/ciphers", big, "tlsplane.io/ciphers"},
		{"64 KiB ALPN", "tlsplane.io/alpnProtocols", strings.Repeat("h", 64*1024), "tlsplane.io/alpnProtocols"},
		{"64 KiB pins", "tlsplane.io/verifyCertificateHashes", strings.Repeat(strings.Repeat("ab", 32)+"\n", 64*1024/65), "tlsplane.io/verifyCertificateHashes"},
		{"64 KiB key", "tlsplane.io/" + strings.Repeat("k", 64*1024), "1", "not a valid key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := oversizeInputs(fuzzGoldenCA(t), func(p *gwv1.BackendTLSPolicy) {
				p.Spec.Options = map[gwv1.AnnotationKey]gwv1.AnnotationValue{gwv1.AnnotationKey(tt.key): gwv1.AnnotationValue(tt.value)}
			})
			m := translateMeasured(in, translator.Options{})
			m.checkBounded(t, len(tt.key)+len(tt.value), 20)
			accepted, _ := policyStatus(t, m.out)
			t.Logf("Accepted=%s %s: %.300s", accepted.Status, accepted.Reason, accepted.Message)
			checkFailsClosed(t, in, m.out)
			if accepted.Status != metav1.ConditionFalse || accepted.Reason != string(gwv1.PolicyReasonInvalid) || !strings.Contains(accepted.Message, tt.wantInMessage) {
				t.Errorf("Accepted = %s %s, want False Invalid naming %s", accepted.Status, accepted.Reason, tt.wantInMessage)
			}
			// The message quotes the value cut short, never all of it.
			if len(accepted.Message) > 4096 {
				t.Errorf("message of %d bytes: the value is not cut short", len(accepted.Message))
			}
		})
	}
}

func TestThousandsOfCARefsAndTargets(t *testing.T) {
	const n = 2000 // the CRD allows 8 refs and 16 targets
	in := oversizeInputs(fuzzGoldenCA(t), func(p *gwv1.BackendTLSPolicy) {
		for i := range n {
			p.Spec.Validation.CACertificateRefs = append(p.Spec.Validation.CACertificateRefs,
				gwv1.LocalObjectReference{Kind: "ConfigMap", Name: gwv1.ObjectName(fmt.Sprintf("missing-%d", i))})
			section := gwv1.SectionName(fmt.Sprintf("port-%d", i))
			p.Spec.TargetRefs = append(p.Spec.TargetRefs, gwv1.LocalPolicyTargetReferenceWithSectionName{
				LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{Kind: "Service", Name: "pay"},
				SectionName:                &section,
			})
		}
	})
	m := translateMeasured(in, translator.Options{})
	m.checkBounded(t, n*40, 200)
	st := m.out.Statuses[types.NamespacedName{Namespace: "shop", Name: "pay-tls"}]
	if len(st.Ancestors) != 16 {
		t.Errorf("%d ancestor entries, want the API's maximum of 16", len(st.Ancestors))
	}
	accepted, resolved := policyStatus(t, m.out)
	t.Logf("Accepted=%s %s (%d bytes); ResolvedRefs=%s %s (%d bytes)", accepted.Status, accepted.Reason, len(accepted.Message), resolved.Status, resolved.Reason, len(resolved.Message))
	checkFailsClosed(t, in, m.out)
}

// clusterSANMatchers are the SAN matchers of a cluster's TLS context.
func clusterSANMatchers(t *testing.T, c *clusterv3.Cluster) []*tlsv3.SubjectAltNameMatcher {
	t.Helper()
	ctx := &tlsv3.UpstreamTlsContext{}
	if err := c.GetTransportSocket().GetTypedConfig().UnmarshalTo(ctx); err != nil {
		t.Fatalf("cluster %s: %v", c.Name, err)
	}
	return ctx.GetCommonTlsContext().GetCombinedValidationContext().GetDefaultValidationContext().GetMatchTypedSubjectAltNames()
}
