package crlfetch

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// MaxRedirects is how many redirects one fetch follows.
const MaxRedirects = 3

// The outcomes of a fetch, the fetch counter's label values.
const (
	outcomeOK          = "ok"
	outcomeNotAllowed  = "not_allowed"
	outcomeRequest     = "request_failed" // network error, timeout, refused redirect
	outcomeHTTPStatus  = "http_status"
	outcomeTooLarge    = "too_large"
	outcomeInvalid     = "invalid_list"
	outcomeWrongSigner = "wrong_signer"
	outcomeOlder       = "older_list"
)

// fetchError is a failed fetch with its outcome label.
type fetchError struct {
	outcome string
	err     error
}

func (e *fetchError) Error() string { return e.err.Error() }

func failed(outcome string, format string, args ...any) error {
	return &fetchError{outcome: outcome, err: fmt.Errorf(format, args...)}
}

// outcomeOf is err's label.
func outcomeOf(err error) string {
	if err == nil {
		return outcomeOK
	}
	var fe *fetchError
	if errors.As(err, &fe) {
		return fe.outcome
	}
	return outcomeRequest
}

// newClient is an HTTP client that follows at most MaxRedirects redirects,
// each to an allowed scheme and host, and gives up after timeout.
func newClient(transport http.RoundTripper, allowed Allowed, timeout time.Duration) *http.Client {
	return &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return failed(outcomeRequest, "more than %d redirects", MaxRedirects)
			}
			if !allowed.Allows(req.URL) {
				return failed(outcomeNotAllowed, "redirected to %s, whose scheme and host are not in %s", req.URL.Redacted(), AllowFlag)
			}
			return nil
		},
	}
}

// get fetches the body at u, at most maxBytes of it.
func get(ctx context.Context, client *http.Client, u string, maxBytes int64, timeout time.Duration) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, failed(outcomeRequest, "%v", err)
	}
	req.Header.Set("Accept", "application/pkix-crl, application/x-pem-file;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			var fe *fetchError
			if errors.As(ue.Err, &fe) {
				return nil, fe
			}
		}
		if ctx.Err() != nil {
			return nil, failed(outcomeRequest, "no answer within the %s --crl-fetch-timeout allows", timeout)
		}
		return nil, failed(outcomeRequest, "%v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, failed(outcomeHTTPStatus, "HTTP status %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, failed(outcomeRequest, "reading the body: %v", err)
	}
	if int64(len(body)) > maxBytes {
		return nil, failed(outcomeTooLarge, "the body is larger than the %d bytes --crl-fetch-max-bytes allows", maxBytes)
	}
	return body, nil
}

// verify reads body (DER, or the first PEM "X509 CRL" block) as a list
// signed by one of cas, the CA certificates naming its URL; it returns the
// list's DER.
func verify(body []byte, cas [][]byte) ([]byte, *x509.RevocationList, error) {
	der := body
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("-----BEGIN")) {
		der = nil
		for rest := body; der == nil; {
			var block *pem.Block
			if block, rest = pem.Decode(rest); block == nil {
				return nil, nil, failed(outcomeInvalid, "the PEM body has no X509 CRL block")
			}
			if block.Type == "X509 CRL" {
				der = block.Bytes
			}
		}
	}
	list, err := x509.ParseRevocationList(der)
	if err != nil {
		return nil, nil, failed(outcomeInvalid, "not a CRL: %v", err)
	}
	for _, raw := range cas {
		ca, err := x509.ParseCertificate(raw)
		if err == nil && bytes.Equal(list.RawIssuer, ca.RawSubject) && list.CheckSignatureFrom(ca) == nil {
			return der, list, nil
		}
	}
	return nil, nil, failed(outcomeWrongSigner, "the list (issuer %q) is not signed by a CA certificate naming this distribution point", list.Issuer.String())
}
