package snapshots

import (
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"

	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

func TestTypeVersionIsAContentHash(t *testing.T) {
	version := func(items ...types.Resource) string {
		t.Helper()
		enc, err := encode(newDigests(), items)
		if err != nil {
			t.Fatal(err)
		}
		return typeVersion(enc)
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

// Envoy keeps an updated cluster warming until its load assignment is sent
// again, so a cluster change must change that assignment's version, and
// only that one's.
func TestClusterChangeReversionsItsLoadAssignment(t *testing.T) {
	before, err := versionsOf(newDigests(), everything(st.Output(payments, ledger)))
	if err != nil {
		t.Fatal(err)
	}
	sni := payments
	sni.SNI = "other.shop"
	after, err := versionsOf(newDigests(), everything(st.Output(sni, ledger)))
	if err != nil {
		t.Fatal(err)
	}
	if before.byType[resource.EndpointType] == after.byType[resource.EndpointType] {
		t.Error("EDS type version unchanged after a cluster change")
	}
	if before.byType[resource.SecretType] != after.byType[resource.SecretType] {
		t.Error("SDS type version changed")
	}
	eds := func(v versions, name string) string { return v.byResource[resource.EndpointType][name] }
	if eds(before, "shop/payments/8443") == eds(after, "shop/payments/8443") {
		t.Error("changed cluster's load assignment kept its version")
	}
	if eds(before, "bank/ledger/443") != eds(after, "bank/ledger/443") {
		t.Error("untouched cluster's load assignment changed version")
	}
}
