package harness

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"
)

// GatewayCall is one request to a listener tlsplane configured for a
// Gateway: Envoy routes it by Host and path, as a client of the Gateway
// would send it.
type GatewayCall struct {
	Port int
	// Host is the Host header and, over TLS, the SNI (unless TLS.ServerName
	// is set).
	Host   string
	Path   string
	Header http.Header
	// TLS, when set, makes the call HTTPS; the client verifies the
	// listener's certificate against TLS.RootCAs for the SNI.
	TLS *tls.Config
}

// GatewayGet sends GET on a new connection, so every call shows the
// listener, filter chain and certificate Envoy picks now. Only a failure to
// get an answer (a refused handshake included), or a 200 without an echo,
// is an error.
func GatewayGet(c GatewayCall) (Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	scheme := "http"
	transport := &http.Transport{DisableKeepAlives: true}
	if c.TLS != nil {
		scheme = "https"
		cfg := c.TLS.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = c.Host
		}
		transport.TLSClientConfig = cfg
	}
	defer transport.CloseIdleConnections()
	url := scheme + "://127.0.0.1:" + strconv.Itoa(c.Port) + c.Path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Response{}, err
	}
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	req.Host = c.Host
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Response{}, err
	}
	r := Response{Status: resp.StatusCode, Body: string(body)}
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		r.PeerCertificate = resp.TLS.PeerCertificates[0]
	}
	if r.Status == http.StatusOK {
		if err := json.Unmarshal(body, &r.Echo); err != nil {
			return r, fmt.Errorf("200 without an echo: %q", body)
		}
	}
	return r, nil
}

// ListenerState is one dynamic listener as Envoy's config_dump shows it.
type ListenerState struct {
	Name            string
	Active, Warming bool
	// Address and Port are those of the active state, else the warming one.
	Address string
	Port    int
	// Error is Envoy's reason for rejecting the last update, if it did.
	Error string
}

func (l ListenerState) String() string {
	return fmt.Sprintf("%s active=%v warming=%v address=%s:%d error=%q", l.Name, l.Active, l.Warming, l.Address, l.Port, l.Error)
}

// Listeners reads the listeners Envoy got over LDS, by name.
func (e *Envoy) Listeners() (map[string]ListenerState, error) {
	body, err := HTTPGet(e.AdminURL("/config_dump?resource=dynamic_listeners"))
	if err != nil {
		return nil, err
	}
	type state struct {
		Listener struct {
			Address struct {
				SocketAddress struct {
					Address   string `json:"address"`
					PortValue int    `json:"port_value"`
				} `json:"socket_address"`
			} `json:"address"`
		} `json:"listener"`
	}
	var dump struct {
		Configs []struct {
			Name       string `json:"name"`
			Active     *state `json:"active_state"`
			Warming    *state `json:"warming_state"`
			ErrorState *struct {
				Details string `json:"details"`
			} `json:"error_state"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(body, &dump); err != nil {
		return nil, fmt.Errorf("config_dump dynamic_listeners: %w", err)
	}
	out := map[string]ListenerState{}
	for _, c := range dump.Configs {
		l := ListenerState{Name: c.Name, Active: c.Active != nil, Warming: c.Warming != nil}
		if s := c.Active; s != nil || c.Warming != nil {
			if s == nil {
				s = c.Warming
			}
			l.Address, l.Port = s.Listener.Address.SocketAddress.Address, s.Listener.Address.SocketAddress.PortValue
		}
		if c.ErrorState != nil {
			l.Error = c.ErrorState.Details
		}
		out[c.Name] = l
	}
	return out, nil
}

// SaveConfigDump writes Envoy's whole configuration (endpoints included)
// to path, for reading after a failure.
func (e *Envoy) SaveConfigDump(path string) error {
	body, err := HTTPGet(e.AdminURL("/config_dump?include_eds"))
	if err != nil {
		return err
	}
	return os.WriteFile(path, body, 0o644)
}
