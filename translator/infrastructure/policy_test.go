package infrastructure

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, key string
		want         bool
	}{
		{"*", "team", true},
		{"*", "example.com/team", true},
		{"team", "team", true},
		{"team", "teams", false},
		{"eks.amazonaws.com/*", "eks.amazonaws.com/role-arn", true},
		{"eks.amazonaws.com/*", "xeks.amazonaws.com/role-arn", false},
		{"*.kubernetes.io/*", "pod-security.kubernetes.io/enforce", true},
		{"*.kubernetes.io/*", "kubernetes.io/enforce-mountable-secrets", false},
		{"kubernetes.io/*", "kubernetes.io/enforce-mountable-secrets", true},
		{"*.k8s.io/*", "node.k8s.io/x", true},
		{"a*b*c", "abc", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "acb", false},
		{"ab*ba", "aba", false},
	} {
		if got := match(tc.pattern, tc.key); got != tc.want {
			t.Errorf("match(%q, %q) = %v, want %v", tc.pattern, tc.key, got, tc.want)
		}
	}
}

// The default policy (every key allowed but the denied ones) drops the
// identity-granting and reserved keys, names them and never their values.
func TestJudgeDefaults(t *testing.T) {
	p := &Policy{Namespaces: []string{"shop"}, AllowedLabelKeys: []string{"*"}, AllowedAnnotationKeys: []string{"*"}, DeniedKeys: DefaultDeniedKeys}
	gw := &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "edge"}, Spec: gwv1.GatewaySpec{
		Infrastructure: &gwv1.GatewayInfrastructure{
			Labels: map[gwv1.LabelKey]gwv1.LabelValue{"team": "pay", "azure.workload.identity/use": "true", "app.kubernetes.io/name": "x"},
			Annotations: map[gwv1.AnnotationKey]gwv1.AnnotationValue{
				"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/admin", "iam.gke.io/gcp-service-account": "admin@p.iam",
				"azure.workload.identity/client-id": "c1", "kubernetes.io/enforce-mountable-secrets": "false",
				"example.com/cost-center": "42",
			},
		},
	}}
	m := p.Judge(gw)
	if len(m.Labels) != 1 || m.Labels["team"] != "pay" {
		t.Errorf("labels copied: %v, want only team", m.Labels)
	}
	if len(m.Annotations) != 1 || m.Annotations["example.com/cost-center"] != "42" {
		t.Errorf("annotations copied: %v, want only example.com/cost-center", m.Annotations)
	}
	const want = "labels app.kubernetes.io/name (--provision-denied-keys), azure.workload.identity/use (--provision-denied-keys); " +
		"annotations azure.workload.identity/client-id (--provision-denied-keys), eks.amazonaws.com/role-arn (--provision-denied-keys), " +
		"iam.gke.io/gcp-service-account (--provision-denied-keys), kubernetes.io/enforce-mountable-secrets (--provision-denied-keys)"
	if got := m.Summary(); got != want {
		t.Errorf("summary:\n got %s\nwant %s", got, want)
	}
	conds := p.Conditions(gw)
	if len(conds) != 2 || conds[0].Status != metav1.ConditionTrue || conds[1].Status != metav1.ConditionFalse || conds[1].Reason != ReasonKeysDropped {
		t.Fatalf("conditions %+v", conds)
	}
	if strings.Contains(conds[1].Message, "arn:aws") || !strings.Contains(conds[1].Message, "eks.amazonaws.com/role-arn") {
		t.Errorf("message names the key, never the value: %s", conds[1].Message)
	}
}

// An allow list drops every key it does not match; a namespace not listed
// is not provisioned, and the condition names the flag and the list.
func TestJudgeAllowListAndNamespace(t *testing.T) {
	p := &Policy{Namespaces: []string{"shop", "pay"}, AllowedLabelKeys: []string{"team", "example.com/*"}, AllowedAnnotationKeys: []string{"example.com/*"}, DeniedKeys: DefaultDeniedKeys}
	gw := &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "edge"}, Spec: gwv1.GatewaySpec{
		Infrastructure: &gwv1.GatewayInfrastructure{
			Labels:      map[gwv1.LabelKey]gwv1.LabelValue{"team": "pay", "example.com/tier": "1", "other": "x"},
			Annotations: map[gwv1.AnnotationKey]gwv1.AnnotationValue{"example.com/a": "1", "note": "x"},
		},
	}}
	m := p.Judge(gw)
	if len(m.Labels) != 2 || len(m.Annotations) != 1 {
		t.Errorf("copied labels %v annotations %v", m.Labels, m.Annotations)
	}
	if got, want := m.Summary(), "labels other (not in --provision-allowed-label-keys); annotations note (not in --provision-allowed-annotation-keys)"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	conds := p.Conditions(gw)
	if conds[0].Status != metav1.ConditionFalse || conds[0].Reason != ReasonNamespaceNotAllowed ||
		conds[0].Message != "namespace kube-system is not one of --provision-namespaces (shop, pay): tlsplane creates nothing for this Gateway; run its Envoy fleet yourself" {
		t.Errorf("namespace condition %+v", conds[0])
	}
	if !(&Policy{Namespaces: []string{AllNamespaces}}).Provisions("kube-system") {
		t.Error("* does not provision kube-system")
	}
}
