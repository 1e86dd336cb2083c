package translator_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// failClosedStatusObjects are a Service pay (edited per case), its
// policy pay-tls trusting the ConfigMap pay-ca, and a Gateway edge whose
// route sends /edge to the Service reach (also edited per case) with its
// policy reach-tls.
func failClosedStatusObjects(t *testing.T) translator.Inputs {
	t.Helper()
	ca := "    " + strings.ReplaceAll(strings.TrimSpace(translator.TestCA), "\n", "\n    ")
	doc := `
apiVersion: v1
kind: ConfigMap
metadata: {name: pay-ca, namespace: shop}
data:
  ca.crt: |
` + ca + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: pay-tls, namespace: shop, generation: 2, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Service, name: pay}]
  validation:
    hostname: pay.shop.example
    caCertificateRefs: [{group: "", kind: ConfigMap, name: pay-ca}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: reach-tls, namespace: shop, generation: 1, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Service, name: reach}]
  validation:
    hostname: reach.shop.example
    caCertificateRefs: [{group: "", kind: ConfigMap, name: pay-ca}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane, generation: 1}
spec: {controllerName: tlsplane.io/controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: shop, generation: 1}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: edge, namespace: shop, generation: 1}
spec:
  parentRefs: [{name: edge}]
  rules: [{backendRefs: [{name: reach, port: 443}]}]
`
	in, err := manifests.Parse("fail-closed-status.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// service is a Service of shop, type ExternalName when externalName is
// not "-" (an empty one is the defect under test), with TCP ports by name.
func failClosedService(name, externalName string, ports ...corev1.ServicePort) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
		Spec:       corev1.ServiceSpec{Ports: ports},
	}
	if externalName != "-" {
		svc.Spec.Type, svc.Spec.ExternalName = corev1.ServiceTypeExternalName, externalName
	}
	return svc
}

func failClosedTCPPort(name string, number int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: number, Protocol: corev1.ProtocolTCP}
}

// wantPolicyCondition is a condition's status and reason, and what its message
// must say.
type wantPolicyCondition struct {
	status  metav1.ConditionStatus
	reason  string
	message []string
}

// Whatever makes a targeted port fail closed, or leaves it without a
// cluster, shows on the policy's status, for a Service ancestor and a
// Gateway ancestor alike: never Accepted True over a port that is not
// served with the policy's TLS.
func TestFailClosedPortsShowOnPolicyStatus(t *testing.T) {
	refused := errors.New("a test rule refuses every CA secret")
	accepted := wantPolicyCondition{status: metav1.ConditionTrue, reason: "Accepted"}
	resolved := wantPolicyCondition{status: metav1.ConditionTrue, reason: "ResolvedRefs"}
	healthy := failClosedService("reach", "-", failClosedTCPPort("https", 443))
	cases := []struct {
		name string
		pay  *corev1.Service
		// reach replaces the Service the Gateway routes to.
		reach *corev1.Service
		// secretRules replaces Envoy's rules for CA secrets.
		secretRules func(*tlsv3.Secret) error
		policy      string
		ancestor    string // kind/namespace/name[/section] of the one ancestor
		sectionName string // pay-tls's targetRef sectionName
		system      bool   // pay-tls trusts wellKnownCACertificates: System
		accepted    wantPolicyCondition
		resolved    wantPolicyCondition
		// cluster is pay's (or reach's) cluster: "tls" (the policy's),
		// "fail-closed" or "none".
		cluster string
	}{{
		name:     "healthy ExternalName",
		pay:      failClosedService("pay", "pay.partner.example", failClosedTCPPort("https", 443)),
		policy:   "pay-tls",
		ancestor: "Service/shop/pay",
		accepted: accepted, resolved: resolved, cluster: "tls",
	}, {
		name:     "ExternalName without externalName",
		pay:      failClosedService("pay", "", failClosedTCPPort("https", 443)),
		policy:   "pay-tls",
		ancestor: "Service/shop/pay",
		accepted: wantPolicyCondition{status: metav1.ConditionFalse, reason: "TargetNotFound", message: []string{
			"Service shop/pay port 443", "spec.externalName", "no cluster",
		}},
		resolved: resolved, cluster: "none",
	}, {
		name:        "ExternalName without externalName, by sectionName",
		pay:         failClosedService("pay", "", failClosedTCPPort("https", 443)),
		sectionName: "https",
		policy:      "pay-tls",
		ancestor:    "Service/shop/pay/https",
		accepted: wantPolicyCondition{status: metav1.ConditionFalse, reason: "TargetNotFound", message: []string{
			"Service shop/pay port 443", "spec.externalName",
		}},
		resolved: resolved, cluster: "none",
	}, {
		name:     "ExternalName without externalName, reached by a Gateway",
		reach:    failClosedService("reach", "", failClosedTCPPort("https", 443)),
		policy:   "reach-tls",
		ancestor: "Gateway/shop/edge",
		accepted: wantPolicyCondition{status: metav1.ConditionFalse, reason: "TargetNotFound", message: []string{
			"Service shop/reach port 443", "spec.externalName",
		}},
		resolved: resolved, cluster: "none",
	}, {
		// The API server refuses the port; an object handed to the
		// translator need not come through it.
		name:     "a cluster Envoy would reject",
		pay:      failClosedService("pay", "pay.partner.example", failClosedTCPPort("https", 443), failClosedTCPPort("big", 70000)),
		policy:   "pay-tls",
		ancestor: "Service/shop/pay",
		accepted: wantPolicyCondition{status: metav1.ConditionFalse, reason: "TargetNotFound", message: []string{
			"Service shop/pay port 70000", "PortValue",
		}},
		resolved: resolved, cluster: "tls",
	}, {
		name:        "a cluster Envoy would reject on a port the policy does not name",
		pay:         failClosedService("pay", "pay.partner.example", failClosedTCPPort("https", 443), failClosedTCPPort("big", 70000)),
		sectionName: "https",
		policy:      "pay-tls",
		ancestor:    "Service/shop/pay/https",
		accepted:    accepted, resolved: resolved, cluster: "tls",
	}, {
		name:        "a CA secret Envoy would reject",
		pay:         failClosedService("pay", "-", failClosedTCPPort("https", 443)),
		secretRules: func(*tlsv3.Secret) error { return refused },
		policy:      "pay-tls",
		ancestor:    "Service/shop/pay",
		accepted: wantPolicyCondition{status: metav1.ConditionFalse, reason: "NoValidCACertificate", message: []string{
			"ConfigMap shop/pay-ca", "CA/shop/configmap/pay-ca", refused.Error(),
		}},
		resolved: wantPolicyCondition{status: metav1.ConditionFalse, reason: "InvalidCACertificateRef", message: []string{
			"ConfigMap shop/pay-ca", refused.Error(),
		}},
		cluster: "fail-closed",
	}, {
		name:        "a system CA secret Envoy would reject",
		pay:         failClosedService("pay", "-", failClosedTCPPort("https", 443)),
		secretRules: func(*tlsv3.Secret) error { return refused },
		system:      true,
		policy:      "pay-tls",
		ancestor:    "Service/shop/pay",
		accepted: wantPolicyCondition{status: metav1.ConditionFalse, reason: "NoValidCACertificate", message: []string{
			"system CA bundle", translator.DefaultSystemCABundlePath, refused.Error(),
		}},
		resolved: resolved, cluster: "fail-closed",
	}, {
		name:        "a CA secret Envoy would reject, reached by a Gateway",
		secretRules: func(*tlsv3.Secret) error { return refused },
		policy:      "reach-tls",
		ancestor:    "Gateway/shop/edge",
		accepted: wantPolicyCondition{status: metav1.ConditionFalse, reason: "NoValidCACertificate", message: []string{
			"ConfigMap shop/pay-ca", refused.Error(),
		}},
		resolved: wantPolicyCondition{status: metav1.ConditionFalse, reason: "InvalidCACertificateRef", message: []string{
			"ConfigMap shop/pay-ca", refused.Error(),
		}},
		cluster: "fail-closed",
	}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := failClosedStatusObjects(t)
			pay, reach := tc.pay, tc.reach
			if pay == nil {
				pay = failClosedService("pay", "-", failClosedTCPPort("https", 443))
			}
			if reach == nil {
				reach = healthy
			}
			in.Services = []*corev1.Service{pay, reach}
			for i, p := range in.Policies {
				if p.Name != "pay-tls" {
					continue
				}
				p = p.DeepCopy()
				if tc.sectionName != "" {
					section := gwv1.SectionName(tc.sectionName)
					p.Spec.TargetRefs[0].SectionName = &section
				}
				if tc.system {
					system := gwv1.WellKnownCACertificatesSystem
					p.Spec.Validation.CACertificateRefs, p.Spec.Validation.WellKnownCACertificates = nil, &system
				}
				in.Policies[i] = p
			}
			tr := translator.New()
			if tc.secretRules != nil {
				tr = translator.NewWithCASecretRules(tc.secretRules)
			}
			out := tr.Translate(in, nil, now, translator.Options{})
			st := out.Statuses[types.NamespacedName{Namespace: "shop", Name: tc.policy}]
			if len(st.Ancestors) != 1 {
				t.Fatalf("%d ancestors, want 1: %+v", len(st.Ancestors), st.Ancestors)
			}
			a := st.Ancestors[0]
			if got := policyAncestorName(a.AncestorRef); got != tc.ancestor {
				t.Errorf("ancestor %s, want %s", got, tc.ancestor)
			}
			checkPolicyCondition(t, a.Conditions, "Accepted", tc.accepted)
			checkPolicyCondition(t, a.Conditions, "ResolvedRefs", tc.resolved)

			svc := "pay"
			if tc.policy == "reach-tls" {
				svc = "reach"
			}
			if got := clusterTLSKind(out, "shop/"+svc+"/443"); got != tc.cluster {
				t.Errorf("cluster shop/%s/443 is %s, want %s", svc, got, tc.cluster)
			}
			// A Translator that remembers gives the same again.
			if again := tr.Translate(in, nil, now, translator.Options{}); !reflect.DeepEqual(again.Statuses, out.Statuses) {
				t.Errorf("translated again: statuses %+v, want %+v", again.Statuses, out.Statuses)
			}
		})
	}
}

// A remembering Translator follows a Service that loses its externalName,
// gets it back and loses it again, with no other object changing: each
// status is a fresh translation's.
func TestFailClosedStatusFollowsTheService(t *testing.T) {
	in := failClosedStatusObjects(t)
	good := failClosedService("pay", "pay.partner.example", failClosedTCPPort("https", 443))
	broken := failClosedService("pay", "", failClosedTCPPort("https", 443))
	tr := translator.New()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var previous translator.PreviousStatus
	for i, svc := range []*corev1.Service{good, broken, good, broken, broken} {
		in.Services = []*corev1.Service{svc}
		got := tr.Translate(in, previous, now, translator.Options{})
		want := translator.Translate(in, previous, now, translator.Options{})
		if !reflect.DeepEqual(got.Statuses, want.Statuses) {
			t.Fatalf("step %d: statuses %+v, want a fresh translation's %+v", i, got.Statuses, want.Statuses)
		}
		c := findPolicyCondition(got.Statuses[types.NamespacedName{Namespace: "shop", Name: "pay-tls"}].Ancestors[0].Conditions, "Accepted")
		if wantTrue := svc == good; (c.Status == metav1.ConditionTrue) != wantTrue {
			t.Errorf("step %d: Accepted %s %s %q with externalName %q", i, c.Status, c.Reason, c.Message, svc.Spec.ExternalName)
		}
		previous = translator.PreviousStatus(got.Statuses)
		now = now.Add(time.Minute)
	}
}

func policyAncestorName(r gwv1.ParentReference) string {
	s := fmt.Sprintf("%s/%s/%s", derefString(r.Kind), derefString(r.Namespace), r.Name)
	if r.SectionName != nil {
		s += "/" + string(*r.SectionName)
	}
	return s
}

func derefString[T ~string](p *T) string {
	if p == nil {
		return ""
	}
	return string(*p)
}

func findPolicyCondition(cs []metav1.Condition, kind string) metav1.Condition {
	for _, c := range cs {
		if c.Type == kind {
			return c
		}
	}
	return metav1.Condition{}
}

func checkPolicyCondition(t *testing.T, cs []metav1.Condition, kind string, want wantPolicyCondition) {
	t.Helper()
	c := findPolicyCondition(cs, kind)
	if c.Status != want.status || c.Reason != want.reason {
		t.Errorf("%s: %s %s %q, want %s %s", kind, c.Status, c.Reason, c.Message, want.status, want.reason)
		return
	}
	for _, s := range want.message {
		if !strings.Contains(c.Message, s) {
			t.Errorf("%s: message %q does not say %q", kind, c.Message, s)
		}
	}
}

// clusterTLSKind says what a cluster's TLS is: "none" without the cluster,
// "fail-closed" when it trusts an inline CA (only the fail-closed TLS
// does), "tls" when it validates against an SDS secret in the output.
func clusterTLSKind(out translator.Output, name string) string {
	for _, c := range out.Clusters {
		if c.GetName() != name {
			continue
		}
		ctx := &tlsv3.UpstreamTlsContext{}
		if err := c.GetTransportSocket().GetTypedConfig().UnmarshalTo(ctx); err != nil {
			return "unreadable TLS: " + err.Error()
		}
		common := ctx.GetCommonTlsContext()
		if common.GetValidationContext().GetTrustedCa() != nil {
			return "fail-closed"
		}
		sds := common.GetCombinedValidationContext().GetValidationContextSdsSecretConfig().GetName()
		for _, s := range out.Secrets {
			if s.GetName() == sds {
				return "tls"
			}
		}
		return fmt.Sprintf("TLS with SDS secret %q, not in the output", sds)
	}
	return "none"
}
