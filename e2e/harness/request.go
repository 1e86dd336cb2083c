package harness

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Echo is what the example backend (examples/backend) answers: who it is
// and what it saw of the request and the TLS handshake.
type Echo struct {
	Name       string `json:"name"`
	SNI        string `json:"sni"`
	TLSVersion string `json:"tls_version"`
	ALPN       string `json:"alpn"`
	Proto      string `json:"proto"`
	Host       string `json:"host"`
	Path       string `json:"path"`
	// Headers are the request headers as the backend received them
	// (canonical keys), e.g. those a route filter added.
	Headers map[string][]string `json:"headers"`
	// ClientSubject is the common name of the client certificate Envoy
	// presented, "" for none (a backend that requires one says it).
	ClientSubject string `json:"client_subject"`
}

// Response is one answer through Envoy's test listener; Echo is set on a 200.
type Response struct {
	Status int
	Echo   Echo
	Body   string
	// PeerCertificate is the leaf Envoy presented, on a GatewayGet over TLS.
	PeerCertificate *x509.Certificate
}

func (r Response) String() string {
	if r.Status == http.StatusOK {
		s := fmt.Sprintf("200 backend=%s sni=%q tls=%q alpn=%q proto=%s", r.Echo.Name, r.Echo.SNI, r.Echo.TLSVersion, r.Echo.ALPN, r.Echo.Proto)
		if r.Echo.ClientSubject != "" {
			s += fmt.Sprintf(" client_certificate=%q", r.Echo.ClientSubject)
		}
		return s
	}
	return fmt.Sprintf("%d %q", r.Status, r.Body)
}

var listenerClient = &http.Client{Timeout: 10 * time.Second}

// Request sends GET path through Envoy's listener to cluster. The backend
// closes the connection after answering (X-Echo-Close), so every request
// handshakes anew and proves the TLS configured now. Only a failure to get
// an answer, or a 200 without an echo, is an error.
func (e *Envoy) Request(cluster, path string) (Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.ListenerURL(path), nil)
	if err != nil {
		return Response{}, err
	}
	req.Header.Set(ClusterHeader, cluster)
	req.Header.Set("X-Echo-Close", "1")
	resp, err := listenerClient.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Response{}, err
	}
	r := Response{Status: resp.StatusCode, Body: string(body)}
	if r.Status == http.StatusOK {
		if err := json.Unmarshal(body, &r.Echo); err != nil {
			return r, fmt.Errorf("200 without an echo: %q", body)
		}
	}
	return r, nil
}
