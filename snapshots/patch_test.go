package snapshots

import (
	"maps"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
	"github.com/tlsplane/tlsplane/translator"
)

// feedContent is what a fleet's feed serves: each type's version and every
// resource's name and version.
func feedContent(p *Publisher, fleet string) map[string]string {
	out := map[string]string{}
	for _, typeURL := range servedTypes {
		p.Feed(fleet).Read(typeURL, func(v FeedView) {
			out[typeURL] = v.Version
			v.Each(func(e *FeedEntry) { out[typeURL+" "+e.Name] = e.Version })
		})
	}
	return out
}

// TestPatchRefusedLeavesWhatIsServed: a translation whose changes would
// serve a cluster without its secret is refused like a whole one, nothing
// it touched stays changed, and the next translation (whose changes start
// from what is served) is patched in and served as a fresh publisher
// serves it.
func TestPatchRefusedLeavesWhatIsServed(t *testing.T) {
	p := New(Options{})
	p.NodeStreamOpened(&corev3.Node{Id: "a", Cluster: "mesh"})
	first := st.Output(payments, ledger)
	first.Generation = 1
	if _, err := p.Publish(first); err != nil {
		t.Fatal(err)
	}
	if p.patch == nil {
		t.Fatal("a Translator's Output left nothing to patch")
	}
	before := feedContent(p, "mesh")

	broken := st.Output(payments, ledger)
	broken.Secrets = broken.Secrets[:0]
	for _, s := range st.Output(ledger).Secrets {
		broken.Secrets = append(broken.Secrets, s)
	}
	broken.Generation = 2
	broken.Changed = &translator.ResourceChanges{Since: 1, Secrets: []string{payments.SecretName()}}
	// The namespace whose cluster lost its secret keeps what it was
	// served; the refusal names the secret.
	if _, err := p.Publish(broken); err != nil {
		t.Fatalf("Publish of a cluster without its secret: %v, want its namespace refused alone", err)
	}
	if r := p.Refusals(); len(r) != 1 || r[0].Namespace != "shop" || !strings.Contains(r[0].Message, payments.SecretName()) {
		t.Fatalf("refusals = %v, want namespace shop refused, naming %s", r, payments.SecretName())
	}
	if got := feedContent(p, "mesh"); !maps.Equal(got, before) {
		t.Fatal("a refused patch changed what is served")
	}

	sni := payments
	sni.SNI = "other.shop"
	next := st.Output(sni, ledger)
	next.Generation = 3
	next.Changed = &translator.ResourceChanges{Since: 1, Clusters: []string{sni.ClusterName()}}
	if changed, err := p.Publish(next); err != nil || !changed {
		t.Fatalf("Publish after the refusal: changed=%v, %v", changed, err)
	}
	fresh := New(Options{})
	fresh.NodeStreamOpened(&corev3.Node{Id: "b", Cluster: "mesh"})
	whole := st.Output(sni, ledger)
	if _, err := fresh.Publish(whole); err != nil {
		t.Fatal(err)
	}
	if got, want := feedContent(p, "mesh"), feedContent(fresh, "mesh"); !maps.Equal(got, want) {
		t.Fatalf("patched feed %v, want a fresh publisher's %v", got, want)
	}
	if got := feedContent(p, "mesh"); got[resource.EndpointType+" "+sni.ClusterName()] == before[resource.EndpointType+" "+sni.ClusterName()] {
		t.Fatal("the changed cluster's load assignment kept its version: Envoy would keep the cluster warming")
	}
}

// TestPatchUndo: a patch undone (a later check of the same publish failed)
// leaves the snapshot, its versions, digests, sums and readers as before.
func TestPatchUndo(t *testing.T) {
	d := newDigests()
	out := st.Output(payments, ledger)
	whole, err := newSnapshot(d, everything(out))
	if err != nil {
		t.Fatal(err)
	}
	pt, err := newPatchable(d, 1, whole)
	if err != nil {
		t.Fatal(err)
	}
	copyOf := func() (map[string]map[string]string, map[string]contentSum, int, int) {
		versions := map[string]map[string]string{}
		for typeURL, m := range pt.snap.VersionMap {
			versions[typeURL] = maps.Clone(m)
		}
		return versions, maps.Clone(pt.sums), len(pt.readers), len(pt.secretReaders)
	}
	versions, sums, readers, secretReaders := copyOf()

	sni := payments
	sni.SNI = "other.shop"
	next := st.Output(sni)
	next.Generation = 2
	next.Changed = &translator.ResourceChanges{Since: 1,
		Clusters: []string{sni.ClusterName(), ledger.ClusterName()}, Endpoints: []string{ledger.ClusterName()}, Secrets: []string{ledger.SecretName()}}
	snap, _, undo, err := pt.apply(d, next)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.byType[resource.ClusterType]) != 1 || snap.GetVersion(resource.ClusterType) == whole.GetVersion(resource.ClusterType) {
		t.Fatal("the patch did not apply")
	}
	undo()
	v2, s2, r2, sr2 := copyOf()
	if pt.snap != whole || pt.gen != 1 || len(pt.snap.byType[resource.ClusterType]) != 2 || !maps.EqualFunc(versions, v2, maps.Equal) ||
		!maps.Equal(sums, s2) || readers != r2 || secretReaders != sr2 {
		t.Fatal("undo left the patch's changes behind")
	}
}
