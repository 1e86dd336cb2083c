package capem

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"
)

// maxCABundle is the most a ConfigMap or Secret holds (1 MiB). A larger
// bundle can only come from a manifest file; served, it would go to every
// Envoy of a fleet inside SDS responses that gRPC caps in size, so one
// policy could stall a whole fleet's secrets.
const maxCABundle = 1 << 20

// Normalise checks that data is a bundle of PEM certificates and
// returns it normalised: only the CERTIFICATE blocks, re-encoded, in their
// order, with the earliest notAfter among them (for the CA expiry warning).
// Text between blocks (as in distribution bundles) is ignored.
//
// It is the only place CA content is parsed, so that a cache keyed by the
// source object's UID and resourceVersion can wrap it.
func Normalise(data []byte) (_ []byte, notAfter time.Time, _ error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, notAfter, errors.New("is empty")
	}
	if len(data) > maxCABundle {
		return nil, notAfter, fmt.Errorf("is %d bytes, more than the %d a ConfigMap or Secret can hold", len(data), maxCABundle)
	}
	// While the output would equal data[:kept] (the common case: a file
	// already canonical), nothing is copied; out is written from the first
	// difference on.
	var out bytes.Buffer
	same, kept := true, 0
	diverge := func() {
		if same {
			same = false
			out.Grow(len(data))
			out.Write(data[:kept])
		}
	}
	rest := data
	for n := 1; ; n++ {
		block, after := pem.Decode(rest)
		if block == nil {
			break
		}
		text := blockText(rest, after)
		rest = after
		if block.Type != "CERTIFICATE" {
			return nil, notAfter, fmt.Errorf("has a %s in PEM block %d, not a CERTIFICATE", block.Type, n)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, notAfter, fmt.Errorf("has an invalid X.509 certificate in PEM block %d: %v", n, err)
		}
		if notAfter.IsZero() || cert.NotAfter.Before(notAfter) {
			notAfter = cert.NotAfter
		}
		if len(block.Headers) == 0 && text != nil && bytes.IndexByte(text, '\r') < 0 {
			if same {
				// text is part of data; its offset follows from the capacities.
				start := cap(data) - cap(text)
				end := start + len(text)
				if start == kept && end < len(data) && data[end] == '\n' {
					kept = end + 1
					continue
				}
			}
			diverge()
			out.Write(text) // already canonical: copying is cheaper than encoding
			out.WriteByte('\n')
			continue
		}
		// Headers are dropped: they carry nothing a TLS client uses.
		diverge()
		_ = pem.Encode(&out, &pem.Block{Type: block.Type, Bytes: block.Bytes})
	}
	if same {
		if kept == 0 {
			return nil, notAfter, errors.New("holds no PEM-encoded certificate")
		}
		return data[:kept:kept], notAfter, nil
	}
	if out.Len() == 0 {
		return nil, notAfter, errors.New("holds no PEM-encoded certificate")
	}
	return out.Bytes(), notAfter, nil
}

// blockText is the text of the block pem.Decode just read from rest (what
// lies between its BEGIN line and the remainder), or nil if not found. A
// block's body cannot contain "-----BEGIN ", so the last one before the
// remainder starts it.
func blockText(rest, after []byte) []byte {
	consumed := rest[:len(rest)-len(after)]
	start := bytes.LastIndex(consumed, []byte("-----BEGIN "))
	if start < 0 {
		return nil
	}
	return bytes.TrimRight(consumed[start:], " \t\n")
}
