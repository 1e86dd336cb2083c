package echoserver

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/textproto"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
)

const (
	// idleTimeout closes idle connections, as the original's.
	idleTimeout = 5 * time.Second
	// readHeaderTimeout bounds a request's headers (the original has
	// none; every input here is bounded).
	readHeaderTimeout = 10 * time.Second
	// maxDelay bounds ?delay=, which the original leaves unbounded.
	maxDelay = time.Minute
)

// httpServer serves one HTTP endpoint: HTTP/1.1 and h2c with prior
// knowledge in plain text (an h2c Upgrade is refused, as the original
// refuses it), HTTPS with h2 under TLS.
func (s *Server) httpServer(p Port) *http.Server {
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(true)
	return &http.Server{
		Handler:           &httpHandler{s: s, port: p},
		Protocols:         protocols,
		IdleTimeout:       idleTimeout,
		ReadHeaderTimeout: readHeaderTimeout,
		ErrorLog:          s.log.std("endpoint"),
	}
}

// tlsServerConfig is the TLS endpoints' configuration: the original's
// ALPN list (none under --disable-alpn), TLS 1.2 and later.
func (s *Server) tlsServerConfig(protos []string) *tls.Config {
	if s.cfg.DisableALPN {
		protos = nil
	}
	return &tls.Config{Certificates: []tls.Certificate{s.cert}, NextProtos: protos, MinVersion: tls.VersionTLS12}
}

type httpHandler struct {
	s    *Server
	port Port
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.s.log.infof("endpoint", "%s Request: method=%s url=%s host=%s remoteAddr=%s", r.Proto, r.Method, r.URL, r.Host, r.RemoteAddr)
	if isH2CUpgrade(r.Header) {
		// The original's h2c wrapper refuses an Upgrade (Go's is unsafe).
		w.WriteHeader(http.StatusMethodNotAllowed)
		_, _ = w.Write([]byte("h2c upgrade not allowed"))
		return
	}
	if isWebSocket(r.Header) {
		http.Error(w, "websocket echo is not implemented by the e2e node agent's echo-advanced server", http.StatusNotImplemented)
		return
	}
	var body bytes.Buffer
	if err := r.ParseForm(); err != nil {
		body.WriteString("ParseForm() error: " + err.Error() + "\n")
	}
	// ?delay=duration waits before answering.
	if err := delay(r); err != nil {
		body.WriteString("error delaying response error: " + err.Error() + "\n")
	}
	// ?headers=name:value[,name:value]* are set on the response.
	if err := responseHeaders(r, w); err != nil {
		body.WriteString("response headers error: " + err.Error() + "\n")
	}
	// ?codes=code[:slices][,code[:slices]]* picks the status; 200 by
	// default. Written before the body, as the original does: the
	// Content-Type it sets afterwards never reaches the client, which sees
	// Go's sniffed one. A bad list is reported in the body of a 200, the
	// status left unwritten, as in the original.
	if code, err := pickCode(r.FormValue("codes")); err != nil {
		body.WriteString("codes error: " + err.Error() + "\n")
	} else {
		w.WriteHeader(code)
	}
	h.payload(r, &body)
	w.Header().Set("Content-Type", "application/text")
	if _, err := w.Write(body.Bytes()); err != nil {
		h.s.log.infof("endpoint", "writing the response: %v", err)
	}
}

// payload writes the original's fields, in its order.
func (h *httpHandler) payload(r *http.Request, body *bytes.Buffer) {
	writeField(body, fieldServiceVersion, h.s.cfg.Version)
	writeField(body, fieldServicePort, strconv.Itoa(h.port.Port))
	writeField(body, fieldHost, r.Host)
	// The raw request URI: the suite tests paths Go would normalize.
	writeField(body, fieldURL, r.RequestURI)
	writeNonEmpty(body, fieldCluster, h.s.cfg.Cluster)
	writeNonEmpty(body, fieldIstioVersion, h.s.cfg.IstioVersion)
	// The original reads NAMESPACE but never hands it to its endpoints,
	// so no Namespace line is written.
	writeField(body, fieldMethod, r.Method)
	writeField(body, fieldProto, r.Proto)
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)
	writeField(body, fieldIP, ip)
	if r.TLS != nil {
		writeNonEmpty(body, fieldAlpn, r.TLS.NegotiatedProtocol)
	}
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range r.Header[k] {
			writeKeyValue(body, fieldRequestHeader, k, v)
		}
	}
	writeField(body, fieldHostname, h.s.cfg.Hostname)
}

func isH2CUpgrade(h http.Header) bool {
	return httpguts.HeaderValuesContainsToken(h[textproto.CanonicalMIMEHeaderKey("Upgrade")], "h2c") &&
		httpguts.HeaderValuesContainsToken(h[textproto.CanonicalMIMEHeaderKey("Connection")], "HTTP2-Settings")
}

func isWebSocket(h http.Header) bool {
	return httpguts.HeaderValuesContainsToken(h["Upgrade"], "websocket") &&
		httpguts.HeaderValuesContainsToken(h["Connection"], "upgrade")
}

func delay(r *http.Request) error {
	d := r.FormValue("delay")
	if d == "" {
		return nil
	}
	t, err := time.ParseDuration(d)
	if err != nil {
		return err
	}
	if t > maxDelay {
		return fmt.Errorf("delay %s is longer than the e2e server's bound %s", t, maxDelay)
	}
	select {
	case <-time.After(t):
	case <-r.Context().Done():
	}
	return nil
}

func responseHeaders(r *http.Request, w http.ResponseWriter) error {
	s := r.FormValue("headers")
	if s == "" {
		return nil
	}
	for h := range strings.SplitSeq(s, ",") {
		parts := strings.Split(h, ":")
		if len(parts) != 2 {
			return fmt.Errorf("invalid %q (want name:value)", h)
		}
		// Not Set: the name is kept as written, as the original keeps it.
		w.Header()[parts[0]] = []string{parts[1]}
	}
	return nil
}

// pickCode chooses a status among codes, each weighted by its slices, as
// the original does.
func pickCode(codes string) (int, error) {
	if codes == "" {
		return http.StatusOK, nil
	}
	type slice struct{ code, slices int }
	var pie []slice
	total := 0
	for c := range strings.SplitSeq(codes, ",") {
		parts := strings.Split(c, ":")
		if len(parts) > 2 {
			return 0, fmt.Errorf("invalid %q (want code or code:count)", c)
		}
		code, err := strconv.Atoi(parts[0])
		if err != nil {
			return 0, err
		}
		if code < http.StatusOK || code >= 600 {
			return 0, fmt.Errorf("invalid HTTP response code %v", code)
		}
		n := 1
		if len(parts) == 2 {
			if n, err = strconv.Atoi(parts[1]); err != nil {
				return 0, err
			}
			if n < 0 {
				return 0, fmt.Errorf("invalid count %v", n)
			}
		}
		pie = append(pie, slice{code, n})
		total += n
	}
	if total == 0 {
		return 0, errors.New("codes: every count is 0")
	}
	pick := rand.IntN(total)
	for _, s := range pie {
		if pick < s.slices {
			return s.code, nil
		}
		pick -= s.slices
	}
	return pie[len(pie)-1].code, nil
}
