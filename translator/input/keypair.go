package input

import (
	"crypto/tls"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// KeyPair is the certificate chain and private key a Secret holds under
// tls.crt and tls.key, checked to be a usable pair; the error says what
// is wrong and quotes no key material (crypto/tls's errors do not).
func KeyPair(s *corev1.Secret) (chain, key []byte, err error) {
	chain, key = s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]
	if len(chain) == 0 || len(key) == 0 {
		return nil, nil, fmt.Errorf("needs %s and %s", corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
	}
	if _, err := tls.X509KeyPair(chain, key); err != nil {
		return nil, nil, fmt.Errorf("%s and %s are not a usable certificate and key: %v", corev1.TLSCertKey, corev1.TLSPrivateKeyKey, err)
	}
	return chain, key, nil
}
