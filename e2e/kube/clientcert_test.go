package kube

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// TestClientCertificateSecretIsWatched: a policy naming a client
// certificate Secret that does not exist yet fails closed with
// ResolvedRefs InvalidClientCertificateRef; creating the Secret in the API
// server (which the informers watch because the policy names it) makes the
// policy accepted and serves the certificate as its own SDS secret, its
// private key redacted from /debug/snapshot.
func TestClientCertificateSecretIsWatched(t *testing.T) {
	c := adminClients(t)
	ns := newNamespace(t, c)
	// Fleet e2e has no Gateway: it is served a cluster presenting a
	// policy's client key only when granted the namespace.
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("client-certificate"), "--namespaces", ns, "--fleet-namespaces", "e2e="+ns)...)
	createService(t, c, ns, "pay")
	createCAConfigMap(t, c, ns, "ca", string(harness.NewAuthority(t, "client certificate test CA").PEM))
	p := policy(ns, "pay", "pay", "", "ca", "pay.example.com")
	p.Spec.Options = map[gwv1.AnnotationKey]gwv1.AnnotationValue{"tlsplane.io/clientCertificateRef": "envoy-client"}
	createPolicy(t, c, p)
	expectStatus(t, c, ns, "pay", cond{metav1.ConditionFalse, string(gwv1.PolicyReasonInvalid)}, cond{metav1.ConditionFalse, "InvalidClientCertificateRef"})

	leaf := harness.NewAuthority(t, "client CA").Issue(t, harness.LeafSpec{CommonName: "envoy-client", Client: true})
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "envoy-client"},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: leaf.CertPEM, corev1.TLSPrivateKeyKey: leaf.KeyPEM},
	}
	if _, err := c.kube.CoreV1().Secrets(ns).Create(context.Background(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Secret %s/envoy-client: %v", ns, err)
	}
	expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)

	name := "Client/" + ns + "/envoy-client"
	eventually(t, statusWait, fmt.Sprintf("%s serves SDS secret %s without its key", cp.name, name), func() error {
		body, err := cp.get("/debug/snapshot?node=e2e")
		if err != nil {
			return err
		}
		dump := string(body)
		if !strings.Contains(dump, `"`+name+`"`) {
			return fmt.Errorf("no secret %s in the snapshot", name)
		}
		// Inline bytes are base64 in the dump; the chain must be there,
		// the key must not.
		if !strings.Contains(dump, base64.StdEncoding.EncodeToString(leaf.CertPEM)) {
			return fmt.Errorf("secret %s does not carry the Secret's certificate", name)
		}
		if strings.Contains(dump, base64.StdEncoding.EncodeToString(leaf.KeyPEM)) || strings.Contains(dump, "PRIVATE KEY") {
			return fmt.Errorf("the snapshot shows the private key")
		}
		return nil
	})
}
