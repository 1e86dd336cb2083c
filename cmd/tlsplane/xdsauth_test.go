package main

import (
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestXDSAuthAddressRule(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		args    []string
		wantErr string
	}{
		{"127.0.0.1:18000", nil, ""},
		{"[::1]:18000", nil, ""},
		{"localhost:18000", nil, ""},
		{"0.0.0.0:18000", nil, "not a loopback address"},
		{":18000", nil, "not a loopback address"},
		{"10.1.2.3:18000", nil, "not a loopback address"},
		{"xds.example.internal:18000", nil, "not a loopback address"},
		{"0.0.0.0:18000", []string{"--insecure-xds"}, ""},
		{"0.0.0.0:18000", []string{"--xds-tls-cert", "a.crt"}, "needs all of"},
		{"0.0.0.0:18000", []string{"--xds-tls-cert", "a", "--xds-tls-key", "b", "--xds-client-ca", "c", "--insecure-xds"}, "contradict"},
		{"0.0.0.0:18000", []string{"--xds-tls-cert", "/nonexistent/a", "--xds-tls-key", "/nonexistent/b", "--xds-client-ca", "/nonexistent/c"}, "/nonexistent/a"},
		{"0.0.0.0:18000", []string{"--xds-tls-cert", "a", "--xds-tls-key", "b", "--xds-client-ca", "c", "--xds-fleet-identity", "spiffe://x/fleet"}, "exactly one {cluster}"},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := registerXDSAuthFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		sec, err := f.serverOptions(tc.addr, slog.New(slog.DiscardHandler))
		if tc.wantErr == "" {
			if err != nil || sec.TLS != nil {
				t.Errorf("%s %v: error %v, TLS %v; want plaintext", tc.addr, tc.args, err, sec.TLS != nil)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s %v: error %v, want one containing %q", tc.addr, tc.args, err, tc.wantErr)
		}
	}
}

// The whole command refuses a public plaintext xDS address before it binds
// any port, with the reason.
func TestServeRefusesPublicPlaintextXDS(t *testing.T) {
	err := runServe([]string{"--dir", t.TempDir(), "--xds-address", "0.0.0.0:0", "--admin-address", "127.0.0.1:0"})
	if err == nil || !strings.Contains(err.Error(), "not a loopback address") || !strings.Contains(err.Error(), "--insecure-xds") {
		t.Fatalf("serve --xds-address 0.0.0.0:0: %v; want the loopback refusal", err)
	}
}
