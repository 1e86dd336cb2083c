package kube

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func createService(t *testing.T, c clients, ns, name string, ports ...corev1.ServicePort) *corev1.Service {
	t.Helper()
	if len(ports) == 0 {
		ports = []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443)}}
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Ports: ports},
	}
	out, err := c.kube.CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Service %s/%s: %v", ns, name, err)
	}
	return out
}

func createCAConfigMap(t *testing.T, c clients, ns, name, pem string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"ca.crt": pem}}
	if _, err := c.kube.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ConfigMap %s/%s: %v", ns, name, err)
	}
}

func setCA(t *testing.T, c clients, ns, name, pem string) {
	t.Helper()
	cm, err := c.kube.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"ca.crt": pem}
	if _, err := c.kube.CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update ConfigMap %s/%s: %v", ns, name, err)
	}
}

// policy is a BackendTLSPolicy on Service svc (port section when given),
// trusting ConfigMap caRef.
func policy(ns, name, svc, section, caRef, hostname string) *gwv1.BackendTLSPolicy {
	ref := gwv1.LocalPolicyTargetReferenceWithSectionName{
		LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{Group: "", Kind: "Service", Name: gwv1.ObjectName(svc)},
	}
	if section != "" {
		s := gwv1.SectionName(section)
		ref.SectionName = &s
	}
	return &gwv1.BackendTLSPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gwv1.BackendTLSPolicySpec{
			TargetRefs: []gwv1.LocalPolicyTargetReferenceWithSectionName{ref},
			Validation: gwv1.BackendTLSPolicyValidation{
				CACertificateRefs: []gwv1.LocalObjectReference{{Group: "", Kind: "ConfigMap", Name: gwv1.ObjectName(caRef)}},
				Hostname:          gwv1.PreciseHostname(hostname),
			},
		},
	}
}

func createPolicy(t *testing.T, c clients, p *gwv1.BackendTLSPolicy) *gwv1.BackendTLSPolicy {
	t.Helper()
	out, err := c.gateway.GatewayV1().BackendTLSPolicies(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create BackendTLSPolicy %s/%s: %v", p.Namespace, p.Name, err)
	}
	return out
}

// clusterName is the name tlsplane gives Service port ns/svc/port's cluster.
func clusterName(ns, svc string, port int) string { return fmt.Sprintf("%s/%s/%d", ns, svc, port) }
