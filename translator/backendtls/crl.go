package backendtls

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/tlsopts"
)

// crlKey is the key, in a ConfigMap or Secret, that holds the PEM CRLs.
const crlKey = "ca.crl"

// ReasonInvalidCRLRef is the ResolvedRefs reason of a policy whose
// revocation list cannot be used.
const ReasonInvalidCRLRef = "InvalidCRLRef"

// CRL is a policy's revocation lists, served inside its CA bundle's SDS
// secret so a new list never rebuilds a cluster.
type CRL struct {
	PEM string
	// Source names the object, for messages: "ConfigMap shop/pay-crl".
	Source string
	// NextUpdate is the earliest nextUpdate among the lists (zero: none
	// says): when a list expires, Envoy refuses every certificate of its
	// CA, revoked or not.
	NextUpdate time.Time
}

// WithCRL is bundle with the revocation lists ref names (option
// tlsplane.io/crlRef of a policy or an XBackend in namespace): a copy
// whose secret name and content include the list. When the list cannot
// be used, problem says why and bundle comes back unchanged.
func WithCRL(namespace string, ref tlsopts.ObjectRef, bundle *Bundle, ix *input.Index) (*Bundle, *CRL, string) {
	crl, problem := resolveCRL(namespace, ref, bundle, ix)
	if problem != "" {
		return bundle, nil, problem
	}
	b := *bundle
	b.SecretName, b.CRL = crlSecretName(b.SecretName, namespace, ref), crl.PEM
	return &b, crl, ""
}

// resolveCRL reads the revocation lists ref names and checks each is
// signed by a CA of bundle; problem says what is wrong otherwise.
func resolveCRL(namespace string, ref tlsopts.ObjectRef, bundle *Bundle, ix *input.Index) (*CRL, string) {
	nn := input.NameOf(namespace, ref.Name)
	source := ref.Kind + " " + nn.String()
	what := fmt.Sprintf("option %s: %s", tlsopts.CRLKey, source)
	if bundle.PEM == "" {
		return nil, fmt.Sprintf("option %s: needs caCertificateRefs: the system CA bundle lives on the Envoy hosts, so tlsplane cannot check who signed the list", tlsopts.CRLKey)
	}
	var data []byte
	found := false
	switch ref.Kind {
	case "ConfigMap":
		cm, ok := ix.ConfigMaps[nn]
		if !ok {
			return nil, what + " does not exist"
		}
		if s, ok := cm.Data[crlKey]; ok {
			data, found = []byte(s), true
		} else if b, ok := cm.BinaryData[crlKey]; ok {
			data, found = b, true
		}
	default:
		s, ok := ix.Secrets[nn]
		if !ok {
			return nil, what + " does not exist"
		}
		data, found = s.Data[crlKey]
	}
	if !found {
		return nil, fmt.Sprintf("%s has no key %q", what, crlKey)
	}
	cas, err := certificates(bundle.PEM)
	if err != nil {
		return nil, fmt.Sprintf("%s: the CA bundle: %v", what, err)
	}
	crl := &CRL{Source: source}
	var out bytes.Buffer
	rest := data
	for n := 1; ; n++ {
		block, after := pem.Decode(rest)
		if block == nil {
			if n == 1 {
				return nil, fmt.Sprintf("%s key %q holds no PEM-encoded X509 CRL", what, crlKey)
			}
			break
		}
		rest = after
		if block.Type != "X509 CRL" {
			return nil, fmt.Sprintf("%s key %q has a %s in PEM block %d, not an X509 CRL", what, crlKey, block.Type, n)
		}
		if issuer, err := crl.add(&out, block.Bytes, cas); errors.Is(err, errNotSigned) {
			return nil, fmt.Sprintf("%s key %q: the CRL in PEM block %d (issuer %q) %v", what, crlKey, n, issuer, err)
		} else if err != nil {
			return nil, fmt.Sprintf("%s key %q has an invalid CRL in PEM block %d: %v", what, crlKey, n, err)
		}
	}
	crl.PEM = out.String()
	return crl, ""
}

// errNotSigned: a list no CA of the policy signed.
var errNotSigned = errors.New("is not signed by a CA the policy trusts")

// add checks that der is a list signed by one of cas, then appends it, as
// PEM, to out and notes its nextUpdate. The error is the parser's, or
// errNotSigned with the list's issuer.
func (crl *CRL) add(out *bytes.Buffer, der []byte, cas []*x509.Certificate) (issuer string, err error) {
	list, err := x509.ParseRevocationList(der)
	if err != nil {
		return "", err
	}
	if !signedByOneOf(list, cas) {
		return list.Issuer.String(), errNotSigned
	}
	if !list.NextUpdate.IsZero() && (crl.NextUpdate.IsZero() || list.NextUpdate.Before(crl.NextUpdate)) {
		crl.NextUpdate = list.NextUpdate
	}
	return list.Issuer.String(), pem.Encode(out, &pem.Block{Type: "X509 CRL", Bytes: der})
}

// certificates parses a normalised PEM bundle.
func certificates(bundle string) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	rest := []byte(bundle)
	for {
		block, after := pem.Decode(rest)
		if block == nil {
			return out, nil
		}
		rest = after
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, cert)
	}
}

func signedByOneOf(list *x509.RevocationList, cas []*x509.Certificate) bool {
	for _, ca := range cas {
		if bytes.Equal(list.RawIssuer, ca.RawSubject) && list.CheckSignatureFrom(ca) == nil {
			return true
		}
	}
	return false
}

// crlSecretName is the CA secret's name with the list's source: a policy
// adding a list to a bundle others trust gets a secret of its own.
func crlSecretName(caSecret string, namespace string, ref tlsopts.ObjectRef) string {
	return plan.CRLSecretName(caSecret, plan.CARef(input.NameOf(namespace, "").Namespace, "", ref.Kind, ref.Name))
}
