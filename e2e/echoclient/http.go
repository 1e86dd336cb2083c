package echoclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// maxBodyBytes bounds what one response may make the client read.
const maxBodyBytes = 16 << 20

// httpSender sends a run's HTTP and HTTPS requests.
type httpSender struct {
	r       *request
	tls     *tls.Config
	active  *atomic.Int64
	shared  *http.Transport // h2c and HTTP/2 reuse one connection unless asked not to
	urlHost string          // the URL up to its path
	urlPath string          // the path and query, sent as written
}

func newHTTPSender(r *request, active *atomic.Int64) (*httpSender, error) {
	cfg, err := tlsConfig(r)
	if err != nil {
		return nil, err
	}
	s := &httpSender{r: r, tls: cfg, active: active}
	s.urlHost, s.urlPath = splitPath(r.url)
	// HTTPS makes a connection per request, as the original does.
	if r.http2 && !r.newConn && r.scheme == "http" {
		s.shared = s.transport()
	}
	return s, nil
}

// transport is a new connection pool: HTTP/1.1 without keep-alives (one
// connection per request), or HTTP/2 (with prior knowledge over plain
// text) under --http2.
func (s *httpSender) transport() *http.Transport {
	dialer := &net.Dialer{Timeout: connectionTimeout}
	t := &http.Transport{DialContext: dialer.DialContext, TLSClientConfig: s.tls.Clone()}
	if !s.r.http2 {
		t.DisableKeepAlives = true
		return t
	}
	p := new(http.Protocols)
	if s.r.scheme == "https" {
		p.SetHTTP2(true)
	} else {
		p.SetUnencryptedHTTP2(true)
	}
	t.Protocols = p
	return t
}

func (s *httpSender) close() {
	if s.shared != nil {
		s.shared.CloseIdleConnections()
	}
}

// send makes request id and writes its lines: the URL, the headers sent,
// latency, status, response headers (sorted), then the body's lines.
func (s *httpSender) send(ctx context.Context, id int) (string, error) {
	start := time.Now()
	var out bytes.Buffer
	writeField(&out, id, "Url", s.r.url)
	ctx, cancel := context.WithTimeout(ctx, s.r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, s.r.method, s.urlHost, nil)
	if err != nil {
		return out.String(), err
	}
	// The path as written: the suite tests paths Go would normalize.
	req.URL.Opaque = s.urlPath
	req.Host = s.r.hostHeader
	req.Header = s.r.headers.Clone()
	writeHeaders(&out, id, s.r.headers)
	t := s.shared
	if t == nil {
		t = s.transport()
		defer t.CloseIdleConnections()
	}
	client := &http.Client{Transport: t, Timeout: s.r.timeout}
	if !s.r.follow {
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	resp, err := client.Do(req)
	if err != nil {
		return out.String(), err
	}
	defer resp.Body.Close()
	writeField(&out, id, "Latency", time.Since(start).String())
	writeField(&out, id, "ActiveRequests", strconv.FormatInt(s.active.Load(), 10))
	writeField(&out, id, "StatusCode", strconv.Itoa(resp.StatusCode))
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
	if err != nil {
		return out.String(), err
	}
	names := make([]string, 0, len(resp.Header))
	for name := range resp.Header {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, v := range resp.Header[name] {
			writeField(&out, id, "ResponseHeader", name+":"+v)
		}
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if line != "" {
			writeBodyLine(&out, id, line)
		}
	}
	return out.String(), nil
}

// writeHeaders writes the headers sent, sorted (the original's order is a
// map's).
func writeHeaders(out *bytes.Buffer, id int, h http.Header) {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, v := range h[name] {
			writeField(out, id, "Header", name+":"+v)
		}
	}
}

// splitPath cuts a URL before its path, so the path is sent unparsed.
func splitPath(raw string) (host, path string) {
	const sep = "://"
	i := strings.Index(raw, sep)
	if i < 0 {
		return raw, ""
	}
	j := strings.IndexByte(raw[i+len(sep):], '/')
	if j < 0 {
		return raw, ""
	}
	return raw[:i+len(sep)+j], raw[i+len(sep)+j:]
}

// tlsConfig is the original's: no verification unless a CA is given (or
// with -k), SNI from --server-name else the Host header, ALPN from
// --alpn else the HTTP version's, a client certificate when both files
// are given.
func tlsConfig(r *request) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: r.serverName, NextProtos: r.alpn}
	if r.certFile != "" && r.keyFile != "" {
		cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
		if err != nil {
			return nil, fmt.Errorf("failed to load client certificate: %v", err)
		}
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	}
	if r.caFile != "" && !r.insecure {
		pem, err := os.ReadFile(r.caFile)
		if err != nil {
			return nil, fmt.Errorf("failed to load CA %s: %v", r.caFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA %s: no certificate in it", r.caFile)
		}
		cfg.RootCAs = pool
	} else {
		cfg.InsecureSkipVerify = true
	}
	if r.scheme == "https" && cfg.ServerName == "" {
		cfg.ServerName = r.hostHeader
	}
	if r.alpn == nil && r.scheme != "grpc" {
		cfg.NextProtos = []string{"http/1.1"}
		if r.http2 {
			cfg.NextProtos = []string{"h2"}
		}
	}
	return cfg, nil
}
