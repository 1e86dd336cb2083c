package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
)

// CountPath answers with the counters instead of an echo; it is not counted.
const CountPath = "/_count"

// CloseHeader, on a request, makes the backend close the connection after
// answering (HTTP/2: GOAWAY), so the client's next request handshakes again.
const CloseHeader = "X-Echo-Close"

// counters let a test assert that a backend received nothing.
type counters struct {
	requests   atomic.Int64 // requests answered with an echo, and gRPC calls
	plaintext  atomic.Int64 // plaintext HTTP sent to the TLS listener
	handshakes atomic.Int64 // TLS ClientHellos, including the one of the /_count request
}

// Echo is the JSON body of every answer.
type Echo struct {
	Name       string              `json:"name"`
	SNI        string              `json:"sni"`
	TLSVersion string              `json:"tls_version"`
	ALPN       string              `json:"alpn"`
	Proto      string              `json:"proto"`
	Method     string              `json:"method"`
	Host       string              `json:"host"`
	Path       string              `json:"path"`
	Headers    map[string][]string `json:"headers"`
	// ClientSubject is the client certificate's subject common name, ""
	// without one (only a --client-ca backend asks for one).
	ClientSubject string `json:"client_subject,omitempty"`
}

// Counts is the JSON body of CountPath.
type Counts struct {
	Name       string `json:"name"`
	Requests   int64  `json:"requests"`
	Plaintext  int64  `json:"plaintext"`
	Handshakes int64  `json:"handshakes"`
}

func echoHandler(name string, counts *counters) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == CountPath {
			_ = json.NewEncoder(w).Encode(Counts{
				Name:       name,
				Requests:   counts.requests.Load(),
				Plaintext:  counts.plaintext.Load(),
				Handshakes: counts.handshakes.Load(),
			})
			return
		}
		// A test asks for a fresh handshake on its next request this way.
		if r.Header.Get(CloseHeader) != "" {
			w.Header().Set("Connection", "close")
		}
		count := counts.requests.Add(1)
		n := negotiatedBy(r)
		e := Echo{Name: name, SNI: n.SNI, TLSVersion: n.TLSVersion, ALPN: n.ALPN, Proto: n.Proto,
			Method: r.Method, Host: r.Host, Path: r.URL.Path, Headers: r.Header, ClientSubject: n.ClientSubject}
		logRequest(name, count, r, n)
		_, _ = io.Copy(io.Discard, r.Body)
		_ = json.NewEncoder(w).Encode(e)
	})
}

// plaintextDetector is the server's error log: net/http reports plaintext
// sent to a TLS listener only there, and a test must see it.
type plaintextDetector struct {
	counts *counters
	out    io.Writer
}

func (d plaintextDetector) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("client sent an HTTP request to an HTTPS server")) {
		d.counts.plaintext.Add(1)
	}
	return d.out.Write(p)
}
