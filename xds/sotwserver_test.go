package xds

import (
	"fmt"
	"slices"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/genproto/googleapis/rpc/status"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

// Tests of sotwServer's protocol, on raw streams: which nonce a request
// carries is the point of most of them.

func (s *sotwStream) none(t *testing.T) {
	t.Helper()
	select {
	case resp, ok := <-s.recv:
		if ok {
			t.Fatalf("unexpected SotW response %s: %v", resp.GetTypeUrl(), responseNames(resp))
		}
		t.Fatal("stream ended")
	case <-time.After(quiet):
	}
}

// expect reads the next response, which must be of typeURL and carry
// exactly names.
func (s *sotwStream) expect(t *testing.T, typeURL string, names ...string) *discoveryv3.DiscoveryResponse {
	t.Helper()
	resp := s.next(t)
	if resp.GetTypeUrl() != typeURL {
		t.Fatalf("got a %s response %v, want %s", resp.GetTypeUrl(), responseNames(resp), typeURL)
	}
	wantNames(t, typeURL, responseNames(resp), names...)
	return resp
}

// ack ACKs resp, asking for names.
func (s *sotwStream) ack(t *testing.T, resp *discoveryv3.DiscoveryResponse, names ...string) {
	t.Helper()
	s.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resp.GetTypeUrl(), VersionInfo: resp.GetVersionInfo(), ResponseNonce: resp.GetNonce(), ResourceNames: names})
}

func responseNames(resp *discoveryv3.DiscoveryResponse) []string {
	var names []string
	for _, a := range resp.GetResources() {
		names = append(names, resourceName(a.GetValue()))
	}
	slices.Sort(names)
	return names
}

// backends are n backends in namespace shop, sorted by name.
func backends(n int) []st.Backend {
	out := make([]st.Backend, n)
	for i := range out {
		out[i] = st.Backend{Namespace: "shop", Service: fmt.Sprintf("svc-%02d", i), Port: 8443, SNI: fmt.Sprintf("svc-%02d.shop", i)}
	}
	return out
}

func clusterNames(bs []st.Backend) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.ClusterName())
	}
	return out
}

func secretNames(bs []st.Backend) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.SecretName())
	}
	return out
}

// A wildcard CDS stream is sent every cluster in each response, also when
// one changed, and two streams are sent the same bytes.
func TestSotwWildcardCDSIsAlwaysTheFullSet(t *testing.T) {
	h := start(t, snapshots.Options{})
	bs := backends(5)
	h.publish(t, st.Output(bs...), true)
	a, b := openSotw(t, h), openSotw(t, h)
	a.send(t, &discoveryv3.DiscoveryRequest{Node: node("envoy-a", "edge"), TypeUrl: resource.ClusterType})
	b.send(t, &discoveryv3.DiscoveryRequest{Node: node("envoy-b", "edge"), TypeUrl: resource.ClusterType, ResourceNames: []string{"*"}})
	first := a.expect(t, resource.ClusterType, clusterNames(bs)...)
	a.ack(t, first)
	b.ack(t, b.expect(t, resource.ClusterType, clusterNames(bs)...), "*") // SotW requests repeat every name

	bs[2].SNI = "moved.shop"
	h.publish(t, st.Output(bs...), true)
	ra := a.expect(t, resource.ClusterType, clusterNames(bs)...)
	rb := b.expect(t, resource.ClusterType, clusterNames(bs)...)
	if ra.GetVersionInfo() == first.GetVersionInfo() {
		t.Errorf("version %q after a change, the same as before", ra.GetVersionInfo())
	}
	if ra.GetVersionInfo() != rb.GetVersionInfo() {
		t.Errorf("versions %q and %q for the same content", ra.GetVersionInfo(), rb.GetVersionInfo())
	}
	for i := range ra.GetResources() {
		if !slices.Equal(ra.GetResources()[i].GetValue(), rb.GetResources()[i].GetValue()) {
			t.Errorf("cluster %d differs between the two streams", i)
		}
	}
}

// EDS and SDS asked by name are sent those names only; a name added later
// is sent alone, even though it did not change.
func TestSotwEDSAndSDSByName(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments, ledger), true)
	s := openSotw(t, h)
	n := node("envoy-1", "edge")
	s.send(t, &discoveryv3.DiscoveryRequest{Node: n, TypeUrl: resource.EndpointType, ResourceNames: []string{ledger.ClusterName()}})
	eds := s.expect(t, resource.EndpointType, ledger.ClusterName())
	s.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resource.SecretType, ResourceNames: []string{payments.SecretName()}})
	sds := s.expect(t, resource.SecretType, payments.SecretName())

	s.ack(t, eds, ledger.ClusterName(), payments.ClusterName())
	eds = s.expect(t, resource.EndpointType, payments.ClusterName())
	s.ack(t, eds, ledger.ClusterName(), payments.ClusterName())
	s.ack(t, sds, payments.SecretName())
	s.none(t)

	// An edit to a load assignment nobody asked for sends nothing.
	other := st.Backend{Namespace: "misc", Service: "other", Port: 443, SNI: "other.misc"}
	h.publish(t, st.Output(payments, ledger, other), true)
	s.none(t)
}

// One secret rotated among many: an SDS stream is sent that secret alone,
// and the CDS and EDS streams nothing.
func TestSotwOneSecretChangedAmongMany(t *testing.T) {
	h := start(t, snapshots.Options{})
	bs := backends(20)
	h.publish(t, st.Output(bs...), true)
	s := openSotw(t, h)
	s.send(t, &discoveryv3.DiscoveryRequest{Node: node("envoy-1", "edge"), TypeUrl: resource.ClusterType})
	s.ack(t, s.expect(t, resource.ClusterType, clusterNames(bs)...))
	s.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType})
	s.ack(t, s.expect(t, resource.EndpointType, clusterNames(bs)...))
	s.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resource.SecretType, ResourceNames: secretNames(bs)})
	before := s.expect(t, resource.SecretType, secretNames(bs)...)
	s.ack(t, before, secretNames(bs)...)

	bs[7].CA = "-----BEGIN CERTIFICATE-----\nrotated\n-----END CERTIFICATE-----\n"
	h.publish(t, st.Output(bs...), true)
	after := s.expect(t, resource.SecretType, bs[7].SecretName())
	if after.GetVersionInfo() == before.GetVersionInfo() {
		t.Errorf("SDS version %q unchanged by a rotation", after.GetVersionInfo())
	}
	s.ack(t, after, secretNames(bs)...)
	s.none(t)
}

// A NACK of the last response is reported, the rejected version is not
// sent again, and the next version is: for CDS (the whole set) and SDS
// (only what changed).
func TestSotwNACKIsNotResentAndTheNextVersionIs(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments, ledger), true)
	s := openSotw(t, h)
	s.send(t, &discoveryv3.DiscoveryRequest{Node: node("envoy-1", "edge"), TypeUrl: resource.ClusterType})
	cds := s.expect(t, resource.ClusterType, ledger.ClusterName(), payments.ClusterName())
	s.ack(t, cds)
	s.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resource.SecretType, ResourceNames: []string{ledger.SecretName(), payments.SecretName()}})
	sds := s.expect(t, resource.SecretType, ledger.SecretName(), payments.SecretName())
	s.ack(t, sds, ledger.SecretName(), payments.SecretName())

	bad := payments
	bad.SNI = "rejected.example"
	bad.CA = "-----BEGIN CERTIFICATE-----\nrejected\n-----END CERTIFICATE-----\n"
	h.publish(t, st.Output(bad, ledger), true)
	rejectedCDS := s.expect(t, resource.ClusterType, ledger.ClusterName(), payments.ClusterName())
	rejectedSDS := s.expect(t, resource.SecretType, payments.SecretName())
	for _, r := range []*discoveryv3.DiscoveryResponse{rejectedCDS, rejectedSDS} {
		prev := cds
		if r.GetTypeUrl() == resource.SecretType {
			prev = sds
		}
		var names []string // CDS: the wildcard
		if r.GetTypeUrl() == resource.SecretType {
			names = []string{ledger.SecretName(), payments.SecretName()}
		}
		// A NACK carries the last version accepted.
		s.send(t, &discoveryv3.DiscoveryRequest{
			TypeUrl: r.GetTypeUrl(), VersionInfo: prev.GetVersionInfo(), ResponseNonce: r.GetNonce(),
			ResourceNames: names, ErrorDetail: &status.Status{Code: 13, Message: "rejected " + r.GetTypeUrl()},
		})
		nack := h.expectNACK(t)
		if nack.TypeURL != r.GetTypeUrl() || nack.Version != r.GetVersionInfo() || nack.Nonce != r.GetNonce() {
			t.Errorf("NACK %+v, want type %s version %s nonce %s", nack, r.GetTypeUrl(), r.GetVersionInfo(), r.GetNonce())
		}
	}
	s.none(t) // no resend loop

	fixed := bad
	fixed.SNI = "payments.shop"
	fixed.CA = "-----BEGIN CERTIFICATE-----\nfixed\n-----END CERTIFICATE-----\n"
	h.publish(t, st.Output(fixed, ledger), true)
	for _, r := range []*discoveryv3.DiscoveryResponse{
		s.expect(t, resource.ClusterType, ledger.ClusterName(), payments.ClusterName()),
		s.expect(t, resource.SecretType, payments.SecretName()),
	} {
		if r.GetVersionInfo() == rejectedCDS.GetVersionInfo() || r.GetVersionInfo() == rejectedSDS.GetVersionInfo() {
			t.Errorf("%s: the rejected version %q again", r.GetTypeUrl(), r.GetVersionInfo())
		}
	}
}

// A request whose nonce is not the last one sent is ignored, whatever it
// asks: the response it did not see supersedes it (xDS protocol,
// "Resource updates").
func TestSotwStaleNonceIsIgnored(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments), true)
	s := openSotw(t, h)
	n := node("envoy-1", "edge")
	s.send(t, &discoveryv3.DiscoveryRequest{Node: n, TypeUrl: resource.EndpointType, ResourceNames: []string{payments.ClusterName(), ledger.ClusterName()}})
	first := s.expect(t, resource.EndpointType, payments.ClusterName())
	s.ack(t, first, payments.ClusterName(), ledger.ClusterName())

	h.publish(t, st.Output(payments, ledger), true)
	second := s.expect(t, resource.EndpointType, ledger.ClusterName())
	// Stale: answers the first response, and would ask for a third name
	// and NACK; neither counts.
	third := st.Backend{Namespace: "misc", Service: "third", Port: 443, SNI: "third.misc"}
	h.publish(t, st.Output(payments, ledger, third), true)
	s.send(t, &discoveryv3.DiscoveryRequest{
		TypeUrl: resource.EndpointType, VersionInfo: first.GetVersionInfo(), ResponseNonce: first.GetNonce(),
		ResourceNames: []string{payments.ClusterName(), ledger.ClusterName(), third.ClusterName()},
	})
	s.none(t)

	// The same request with the current nonce is answered: the new name.
	s.send(t, &discoveryv3.DiscoveryRequest{
		TypeUrl: resource.EndpointType, VersionInfo: second.GetVersionInfo(), ResponseNonce: second.GetNonce(),
		ResourceNames: []string{payments.ClusterName(), ledger.ClusterName(), third.ClusterName()},
	})
	s.expect(t, resource.EndpointType, third.ClusterName())
}

// An ACK is answered with nothing while nothing changed, on every type.
func TestSotwACKSendsNothing(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments, ledger), true)
	s := openSotw(t, h)
	s.send(t, &discoveryv3.DiscoveryRequest{Node: node("envoy-1", "edge"), TypeUrl: resource.ClusterType})
	s.ack(t, s.expect(t, resource.ClusterType, ledger.ClusterName(), payments.ClusterName()))
	s.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNames: []string{ledger.ClusterName(), payments.ClusterName()}})
	s.ack(t, s.expect(t, resource.EndpointType, ledger.ClusterName(), payments.ClusterName()), ledger.ClusterName(), payments.ClusterName())
	s.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resource.SecretType})
	s.ack(t, s.expect(t, resource.SecretType, ledger.SecretName(), payments.SecretName()))
	s.none(t)
	// Publishing the same content changes nothing either.
	h.publish(t, st.Output(ledger, payments), false)
	s.none(t)
	if got := counterValue(t, h.metrics.responses.WithLabelValues(resource.ClusterType)); got != 1 {
		t.Errorf("%v CDS responses, want 1", got)
	}
}

// Types that changed together are answered in ADS warming order: clusters,
// then their load assignments, then secrets.
func TestSotwAnswersInWarmingOrder(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments), true)
	s := openSotw(t, h)
	n := node("envoy-1", "edge")
	// Asked in the reverse order.
	s.send(t, &discoveryv3.DiscoveryRequest{Node: n, TypeUrl: resource.SecretType})
	s.ack(t, s.expect(t, resource.SecretType, payments.SecretName()))
	s.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType})
	s.ack(t, s.expect(t, resource.EndpointType, payments.ClusterName()))
	s.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resource.ClusterType})
	s.ack(t, s.expect(t, resource.ClusterType, payments.ClusterName()))

	for i := range 3 {
		// Once the ACKs are in: a type whose response awaits its ACK is
		// answered when it comes, whatever the order.
		s.none(t)
		b := st.Backend{Namespace: "bank", Service: fmt.Sprintf("ledger-%d", i), Port: 443, SNI: "ledger.bank"}
		h.publish(t, st.Output(payments, b), true)
		for _, typeURL := range []string{resource.ClusterType, resource.EndpointType, resource.SecretType} {
			resp := s.next(t)
			if resp.GetTypeUrl() != typeURL {
				t.Fatalf("publish %d: got %s, want %s next", i, resp.GetTypeUrl(), typeURL)
			}
			s.ack(t, resp)
		}
	}
}

// A NACK of a whole-set CDS response that names no cluster implicates
// the clusters that changed since the last ACK, from the versions each
// response carried.
func TestSotwNACKOfAFullSetImplicatesWhatChanged(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments, ledger), true)
	s := openSotw(t, h)
	s.send(t, &discoveryv3.DiscoveryRequest{Node: node("envoy-1", "edge"), TypeUrl: resource.ClusterType})
	s.ack(t, s.expect(t, resource.ClusterType, ledger.ClusterName(), payments.ClusterName()))
	moved := ledger
	moved.SNI = "moved.bank"
	h.publish(t, st.Output(payments, moved), true)
	r := s.expect(t, resource.ClusterType, ledger.ClusterName(), payments.ClusterName())
	s.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resource.ClusterType, ResponseNonce: r.GetNonce(), ErrorDetail: &status.Status{Code: 13, Message: "something is wrong"}})
	nack := h.expectNACK(t)
	wantNames(t, "rejected resources", nack.Resources, ledger.ClusterName())
}
