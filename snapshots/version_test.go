package snapshots

import (
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"

	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

func TestTypeVersionIsAContentHash(t *testing.T) {
	version := func(items ...types.Resource) string {
		t.Helper()
		v, err := typeVersion(items)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, b := st.Cluster(payments), st.Cluster(ledger)
	if version(a, b) != version(b, a) {
		t.Error("order changes the version")
	}
	if version(a, b) != version(st.Cluster(payments), st.Cluster(ledger)) {
		t.Error("equal content, different version")
	}
	sni := payments
	sni.SNI = "other.shop"
	if version(a) == version(st.Cluster(sni)) {
		t.Error("a changed SNI kept the version")
	}
	if version() == version(a) {
		t.Error("empty and non-empty share a version")
	}
}
