package snapshots

import (
	"strings"
	"testing"

	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
	"github.com/tlsplane/tlsplane/translator"
)

func TestNewSnapshotRefusesInconsistentOutput(t *testing.T) {
	for name, tc := range map[string]struct {
		edit    func(*translator.Output)
		wantErr string
	}{
		"consistent":        {edit: func(*translator.Output) {}},
		"missing secret":    {edit: func(o *translator.Output) { o.Secrets = nil }, wantErr: `references secret "shop/payments/8443/ca"`},
		"orphan secret":     {edit: func(o *translator.Output) { o.Secrets = append(o.Secrets, st.Secret(ledger)) }, wantErr: "secret bank/ledger/443/ca: referenced by no cluster"},
		"missing endpoints": {edit: func(o *translator.Output) { o.Endpoints = nil }, wantErr: `reads load assignment "shop/payments/8443", which is not in the snapshot`},
		"orphan endpoints":  {edit: func(o *translator.Output) { o.Endpoints = append(o.Endpoints, st.Endpoints(ledger)) }, wantErr: "load assignment bank/ledger/443: read by no EDS cluster"},
	} {
		t.Run(name, func(t *testing.T) {
			out := st.Output(payments)
			tc.edit(&out)
			_, err := newSnapshot(newDigests(), everything(out))
			if tc.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestReferencedSecretsIgnoresOtherConfigSources(t *testing.T) {
	c := st.Cluster(payments)
	names, err := referencedSecrets(c)
	if err != nil || len(names) != 1 || names[0] != "shop/payments/8443/ca" {
		t.Fatalf("names = %v, err = %v", names, err)
	}
	c.TransportSocket = nil
	if names, _ := referencedSecrets(c); len(names) != 0 {
		t.Fatalf("plaintext cluster references %v", names)
	}
}
