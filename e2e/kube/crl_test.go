package kube

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// TestCRLAndClientCertificateFromTheAPIServer: a policy's
// tlsplane.io/crlRef (a ConfigMap's ca.crl) and tlsplane.io/clientCertificateRef
// (a Secret's tls.crt and tls.key) are read from the informers' cache,
// which keeps only the keys translation reads, with no Gateway in sight:
// the policy is Accepted and both are served.
func TestCRLAndClientCertificateFromTheAPIServer(t *testing.T) {
	c := adminClients(t)
	ns := newNamespace(t, c)
	// Fleet e2e has no Gateway: the client key needs its namespace's grant.
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("crl"), "--namespaces", ns, "--fleet-namespaces", "e2e="+ns)...)
	ca := harness.NewAuthority(t, "CRL CA")
	client := ca.Issue(t, harness.LeafSpec{CommonName: "envoy client", Client: true})
	createService(t, c, ns, "pay")
	createCAConfigMap(t, c, ns, "ca", string(ca.PEM))
	ctx := context.Background()
	crl := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "crl"},
		Data: map[string]string{"ca.crl": string(ca.CRL(t, time.Now().Add(365*24*time.Hour)))}}
	if _, err := c.kube.CoreV1().ConfigMaps(ns).Create(ctx, crl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "client"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: client.CertPEM, corev1.TLSPrivateKeyKey: client.KeyPEM}}
	if _, err := c.kube.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := policy(ns, "pay", "pay", "", "ca", "pay.example.com")
	p.Spec.Options = map[gwv1.AnnotationKey]gwv1.AnnotationValue{"tlsplane.io/crlRef": "ConfigMap/crl", "tlsplane.io/clientCertificateRef": "client"}
	createPolicy(t, c, p)
	expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)
	crlSecret := fmt.Sprintf("+crl/%s/configmap/crl\"", ns)
	clientSecret := fmt.Sprintf("\"Client/%s/client\"", ns)
	eventually(t, statusWait, "the CRL and the client certificate served", func() error {
		body, err := cp.get("/debug/snapshot?node=e2e")
		if err != nil {
			return err
		}
		for _, want := range []string{crlSecret, clientSecret} {
			if !strings.Contains(string(body), want) {
				return fmt.Errorf("no secret %s in:\n%s", want, secretsPart(body))
			}
		}
		return nil
	})
}
