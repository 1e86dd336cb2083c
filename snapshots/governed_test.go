package snapshots

import (
	"slices"
	"testing"

	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

func TestGovernedListsClustersNotSecrets(t *testing.T) {
	p := New(Options{})
	if got := p.Governed(); got != nil {
		t.Errorf("before the first publish: %v, want nil", got)
	}
	if _, err := p.Publish(st.Output(payments, ledger)); err != nil {
		t.Fatal(err)
	}
	got := p.Governed()
	if len(got) != 2 || !slices.Equal(got[payments.Policy()], []string{"shop/payments/8443"}) || !slices.Equal(got[ledger.Policy()], []string{"bank/ledger/443"}) {
		t.Errorf("governed = %v, want each policy's one cluster (no secret)", got)
	}
}
