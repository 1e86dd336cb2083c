package capem

import (
	"strings"
	"testing"

	"github.com/tlsplane/tlsplane/translator/translatortest"
)

func TestCACertificatesPEM(t *testing.T) {
	const keyBlock = "-----BEGIN PRIVATE KEY-----\nTUlJQm9vZ3Vz\n-----END PRIVATE KEY-----\n"
	const notDER = "-----BEGIN CERTIFICATE-----\nTm90IGEgREVSIGNlcnRpZmljYXRl\n-----END CERTIFICATE-----\n"
	tests := []struct {
		name      string
		in        string
		wantCerts int
		wantErr   string
	}{
		{name: "one certificate", in: translatortest.CA, wantCerts: 1},
		{name: "bundle of two", in: translatortest.CA + translatortest.CA2, wantCerts: 2},
		{name: "text between blocks, as in distribution bundles", in: "# Issuer: one\n" + translatortest.CA + "\n# Issuer: two\n" + translatortest.CA2, wantCerts: 2},
		{name: "CRLF line ends", in: strings.ReplaceAll(translatortest.CA, "\n", "\r\n"), wantCerts: 1},
		{name: "empty", in: "", wantErr: "is empty"},
		{name: "whitespace only", in: " \n\t\n", wantErr: "is empty"},
		{name: "plain text", in: "not a certificate\n", wantErr: "holds no PEM-encoded certificate"},
		{name: "private key", in: keyBlock, wantErr: "has a PRIVATE KEY in PEM block 1"},
		{name: "certificate then key", in: translatortest.CA + keyBlock, wantErr: "has a PRIVATE KEY in PEM block 2"},
		{name: "CERTIFICATE block that is not DER", in: notDER, wantErr: "has an invalid X.509 certificate in PEM block 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := Normalise([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(got), "-----BEGIN CERTIFICATE-----"); n != tt.wantCerts {
				t.Errorf("normalised bundle has %d certificates, want %d:\n%s", n, tt.wantCerts, got)
			}
			if strings.Contains(string(got), "#") || strings.Contains(string(got), "\r") {
				t.Errorf("normalised bundle keeps text or CR:\n%q", got)
			}
		})
	}
}
