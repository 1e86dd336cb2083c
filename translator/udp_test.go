package translator_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// GEP-1897: a policy naming a UDP port of a Service is Accepted False,
// reason Invalid; one on a Service with TCP and UDP ports says the UDP
// ports are not covered.
func TestPoliciesOnUDPPorts(t *testing.T) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "dns"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
			{Name: "tls", Port: 853, Protocol: corev1.ProtocolTCP},
			{Name: "udp", Port: 53, Protocol: corev1.ProtocolUDP},
		}},
	}
	section := gwv1.SectionName("udp")
	policy := func(name string, section *gwv1.SectionName) *gwv1.BackendTLSPolicy {
		return &gwv1.BackendTLSPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Spec: gwv1.BackendTLSPolicySpec{
				TargetRefs: []gwv1.LocalPolicyTargetReferenceWithSectionName{{
					LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{Kind: "Service", Name: "dns"},
					SectionName:                section,
				}},
				Validation: gwv1.BackendTLSPolicyValidation{
					Hostname:                "dns.shop.example",
					WellKnownCACertificates: ptr(gwv1.WellKnownCACertificatesSystem),
				},
			},
		}
	}
	out := translator.Translate(translator.Inputs{
		Services: []*corev1.Service{svc},
		Policies: []*gwv1.BackendTLSPolicy{policy("on-udp", &section), policy("whole", nil)},
	}, nil, time.Unix(0, 0), translator.Options{})

	accepted := func(name string) metav1.Condition {
		st := out.Statuses[types.NamespacedName{Namespace: "shop", Name: name}]
		if len(st.Ancestors) != 1 {
			t.Fatalf("%s: %d ancestors", name, len(st.Ancestors))
		}
		for _, c := range st.Ancestors[0].Conditions {
			if c.Type == string(gwv1.PolicyConditionAccepted) {
				return c
			}
		}
		t.Fatalf("%s: no Accepted condition", name)
		return metav1.Condition{}
	}
	if c := accepted("on-udp"); c.Status != metav1.ConditionFalse || c.Reason != string(gwv1.PolicyReasonInvalid) ||
		!strings.Contains(c.Message, `Service shop/dns port "udp" is UDP`) {
		t.Errorf("policy on the UDP port: %s %s %q, want False Invalid naming the port", c.Status, c.Reason, c.Message)
	}
	if c := accepted("whole"); c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, `not TCP: "udp" (UDP)`) {
		t.Errorf("policy on the whole Service: %s %s %q, want True with a warning naming the UDP port", c.Status, c.Reason, c.Message)
	}
	if len(out.Clusters) != 1 || out.Clusters[0].GetName() != "shop/dns/853" || out.Clusters[0].GetTransportSocket() == nil {
		t.Errorf("clusters %v, want only shop/dns/853, with TLS", out.Clusters)
	}
}

func ptr[T any](v T) *T { return &v }
