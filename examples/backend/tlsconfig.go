package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
)

var tlsVersions = map[string]uint16{"1.2": tls.VersionTLS12, "1.3": tls.VersionTLS13}

var curveIDs = map[string]tls.CurveID{
	"X25519MLKEM768": tls.X25519MLKEM768,
	"X25519":         tls.X25519,
	"P-256":          tls.CurveP256,
	"P-384":          tls.CurveP384,
	"P-521":          tls.CurveP521,
}

// serverTLSConfig builds the listener's TLS settings from the flags.
func serverTLSConfig(minTLS, maxTLS, curves string, certs *certReloader, counts *counters) (*tls.Config, error) {
	minV, ok := tlsVersions[minTLS]
	if !ok {
		return nil, fmt.Errorf("--min-tls %q: want 1.2 or 1.3", minTLS)
	}
	maxV, ok := tlsVersions[maxTLS]
	if !ok {
		return nil, fmt.Errorf("--max-tls %q: want 1.2 or 1.3", maxTLS)
	}
	if minV > maxV {
		return nil, fmt.Errorf("--min-tls %s is above --max-tls %s", minTLS, maxTLS)
	}
	cfg := &tls.Config{
		MinVersion:     minV,
		MaxVersion:     maxV,
		GetCertificate: certs.GetCertificate,
		NextProtos:     []string{"h2", "http/1.1"},
		// Every handshake is a full one, so each request is verified against
		// the certificate in the files right now.
		SessionTicketsDisabled: true,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			counts.handshakes.Add(1)
			return nil, nil
		},
	}
	if curves != "" {
		for _, name := range strings.Split(curves, ",") {
			id, ok := curveIDs[strings.TrimSpace(name)]
			if !ok {
				return nil, fmt.Errorf("--curves: unknown group %q", name)
			}
			cfg.CurvePreferences = append(cfg.CurvePreferences, id)
		}
	}
	return cfg, nil
}

// requireClientCertificates makes every handshake present a client
// certificate that a CA in caFile signed: a handshake without one fails,
// as a backend requiring mutual TLS refuses it.
func requireClientCertificates(cfg *tls.Config, caFile string) error {
	pemData, err := os.ReadFile(caFile)
	if err != nil {
		return fmt.Errorf("--client-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemData) {
		return fmt.Errorf("--client-ca %s: no PEM certificate", caFile)
	}
	cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, pool
	return nil
}
