package snapshots

import (
	"maps"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
	"github.com/tlsplane/tlsplane/translator"
)

// TestRefusedFleetIsComparedInFullWhenServedAgain: a Gateway fleet refused
// while the shared resources were patched (its certificate took the name
// of a CA secret a new backend brought) misses that publish's changes; the
// publish that serves it again compares its feed in full, so it ends as a
// fresh publisher serves the same translation, the endpoint moved while it
// was refused included.
func TestRefusedFleetIsComparedInFullWhenServedAgain(t *testing.T) {
	vault := st.Backend{Namespace: "bank", Service: "vault", Port: 443, SNI: "vault.bank"}
	gw := edge
	gw.CertificateSecret = vault.SecretName() // free until vault is translated
	own := gw.Resources()                     // the very same fleet in every generation
	// Its routes reach vault too, so vault's secret is in its scope.
	own.Reached = []string{vault.ClusterName(), payments.ClusterName()}
	output := func(gen, since uint64, changed translator.ResourceChanges, backends ...st.Backend) translator.Output {
		out := st.Output(backends...)
		out.Fleets = map[string]*translator.FleetResources{gw.Fleet(): own}
		out.Generation = gen
		if since != 0 {
			changed.Since = since
			out.Changed = &changed
		}
		return out
	}
	p := New(Options{})
	p.NodeStreamOpened(&corev3.Node{Id: "gw", Cluster: gw.Fleet()})
	if _, err := p.Publish(output(1, 0, translator.ResourceChanges{}, payments)); err != nil {
		t.Fatal(err)
	}
	moved := payments
	moved.Address = "10.0.0.9"
	second := output(2, 1, translator.ResourceChanges{
		Clusters: []string{vault.ClusterName()}, Endpoints: []string{payments.ClusterName(), vault.ClusterName()}, Secrets: []string{vault.SecretName()},
	}, moved, vault)
	if _, err := p.Publish(second); err != nil {
		t.Fatal(err)
	}
	if r := p.Refusals(); len(r) != 1 || r[0].Fleet != gw.Fleet() {
		t.Fatalf("refusals = %v, want fleet %s refused", r, gw.Fleet())
	}
	third := output(3, 2, translator.ResourceChanges{
		Clusters: []string{vault.ClusterName()}, Endpoints: []string{vault.ClusterName()}, Secrets: []string{vault.SecretName()},
	}, moved)
	if _, err := p.Publish(third); err != nil {
		t.Fatal(err)
	}
	if r := p.Refusals(); len(r) != 0 {
		t.Fatalf("refusals = %v, want none", r)
	}
	fresh := New(Options{})
	fresh.NodeStreamOpened(&corev3.Node{Id: "gw", Cluster: gw.Fleet()})
	if _, err := fresh.Publish(output(0, 0, translator.ResourceChanges{}, moved)); err != nil {
		t.Fatal(err)
	}
	if got, want := feedContent(p, gw.Fleet()), feedContent(fresh, gw.Fleet()); !maps.Equal(got, want) {
		t.Fatalf("feed after the refusal:\n%v\nwant a fresh publisher's:\n%v", got, want)
	}
}
