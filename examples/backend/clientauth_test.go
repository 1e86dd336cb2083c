package main

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A --client-ca backend refuses a handshake without a client certificate
// its CA signed, and names the subject of the one it accepted.
func TestRequireClientCertificates(t *testing.T) {
	dir := t.TempDir()
	// Self-signed: the client certificate is its own CA.
	clientCert, clientKey := writePair(t, t.TempDir(), "envoy-client")
	strangerCert, strangerKey := writePair(t, t.TempDir(), "stranger")
	serverCert, serverKey := writePair(t, dir, "backend")

	reloader, err := newCertReloader(serverCert, serverKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := serverTLSConfig("1.2", "1.3", "", reloader, &counters{})
	if err != nil {
		t.Fatal(err)
	}
	if err := requireClientCertificates(cfg, clientCert); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(echoHandler("mtls", &counters{}))
	srv.TLS = cfg
	srv.StartTLS()
	defer srv.Close()

	get := func(certFile, keyFile string) (Echo, error) {
		tc := &tls.Config{InsecureSkipVerify: true} // the server's identity is not the question
		if certFile != "" {
			pair, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				t.Fatal(err)
			}
			tc.Certificates = []tls.Certificate{pair}
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
		resp, err := c.Get(srv.URL + "/")
		if err != nil {
			return Echo{}, err
		}
		defer resp.Body.Close()
		var e Echo
		return e, json.NewDecoder(resp.Body).Decode(&e)
	}
	if e, err := get(clientCert, clientKey); err != nil || e.ClientSubject != "envoy-client" {
		t.Errorf("with the client certificate: echo %+v, err %v; want client_subject envoy-client", e, err)
	}
	if _, err := get("", ""); err == nil {
		t.Error("without a client certificate: the request succeeded")
	}
	if _, err := get(strangerCert, strangerKey); err == nil {
		t.Error("with a certificate another CA signed: the request succeeded")
	}
}
