package translator

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// caCertificatesPEM checks that data is a bundle of PEM certificates and
// returns it normalised: only the CERTIFICATE blocks, re-encoded, in their
// order. Text between blocks (as in distribution bundles) is ignored.
//
// It is the only place CA content is parsed, so that a cache keyed by the
// source object's UID and resourceVersion can wrap it.
func caCertificatesPEM(data []byte) ([]byte, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("is empty")
	}
	var out bytes.Buffer
	rest := data
	for n := 1; ; n++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("has a %s in PEM block %d, not a CERTIFICATE", block.Type, n)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return nil, fmt.Errorf("has an invalid X.509 certificate in PEM block %d: %v", n, err)
		}
		// Headers are dropped: they carry nothing a TLS client uses.
		_ = pem.Encode(&out, &pem.Block{Type: block.Type, Bytes: block.Bytes})
	}
	if out.Len() == 0 {
		return nil, errors.New("holds no PEM-encoded certificate")
	}
	return out.Bytes(), nil
}
