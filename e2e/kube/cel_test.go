package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestCELRejectedPoliciesNeverReachTheTranslator: the CRD's CEL rules
// refuse bad policies in the API server, with the API server's message;
// tlsplane never sees them, so its served clusters stay as they were.
func TestCELRejectedPoliciesNeverReachTheTranslator(t *testing.T) {
	c := adminClients(t)
	ns := newNamespace(t, c)
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("cel"), "--namespaces", ns)...)
	createService(t, c, ns, "pay")

	both := policy(ns, "both", "pay", "", "ca", "pay.example.com")
	system := gwv1.WellKnownCACertificatesSystem
	both.Spec.Validation.WellKnownCACertificates = &system
	neither := policy(ns, "neither", "pay", "", "ca", "pay.example.com")
	neither.Spec.Validation.CACertificateRefs = nil
	badHost := policy(ns, "bad-hostname", "pay", "", "ca", "Not A Hostname!")

	for _, tc := range []struct {
		p    *gwv1.BackendTLSPolicy
		want string
	}{
		{both, "must not contain both CACertificateRefs and WellKnownCACertificates"},
		{neither, "must specify either CACertificateRefs or WellKnownCACertificates"},
		{badHost, "spec.validation.hostname"},
	} {
		_, err := c.gateway.GatewayV1().BackendTLSPolicies(ns).Create(context.Background(), tc.p, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("create BackendTLSPolicy %s: err = %v, want the API server's %q", tc.p.Name, err, tc.want)
		}
	}

	status := func() string {
		body, err := cp.get("/debug/status")
		if err != nil {
			return err.Error()
		}
		return string(body)
	}
	sameFor(t, 2*time.Second, "tlsplane's statuses", status)
	for _, name := range []string{"both", "neither", "bad-hostname"} {
		if strings.Contains(status(), `"`+name+`"`) || strings.Contains(status(), "/"+name) {
			t.Errorf("tlsplane knows of refused policy %s: %s", name, status())
		}
	}
}
