package xds

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/tlsopts"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// envoyNode is a node as Envoy sends it: its build version, and the TLS
// library in metadata ssl.version ("BoringSSL" or "BoringSSL-FIPS").
func envoyNode(id, fleet, ssl string) *corev3.Node {
	n := node(id, fleet)
	n.UserAgentName = "envoy"
	n.UserAgentVersionType = &corev3.Node_UserAgentBuildVersion{UserAgentBuildVersion: &corev3.BuildVersion{
		Version:  &typev3.SemanticVersion{MajorNumber: 1, MinorNumber: 40},
		Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{"ssl.version": structpb.NewStringValue(ssl)}},
	}}
	return n
}

// x25519Payments is payments asking for curve X25519, and ledger.
func x25519Payments(paymentsCA string) translator.Output {
	p := payments
	p.CA = paymentsCA
	return st.Tuned(st.Output(p, ledger), p.ClusterName(), &tlsv3.TlsParameters{EcdhCurves: []string{"X25519"}}, "")
}

func respondedNames(resp *discoveryv3.DiscoveryResponse) []string {
	var names []string
	for _, a := range resp.GetResources() {
		names = append(names, resourceName(a.GetValue()))
	}
	slices.Sort(names)
	return names
}

// TestFIPSNodeIsNotSentWhatItsBuildRefuses: over a real ADS stream, a node
// that says it runs BoringSSL-FIPS is never sent the cluster asking for
// X25519, from its first response on; a plain BoringSSL node of its fleet
// already connected is sent CDS again without it; when the FIPS node
// leaves, the fleet gets the cluster back; the publisher's refusal names
// the fleet, the build and the value.
func TestFIPSNodeIsNotSentWhatItsBuildRefuses(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, x25519Payments(""), true)
	both := []string{ledger.ClusterName(), payments.ClusterName()}

	plain := openSotw(t, h)
	plain.send(t, &discoveryv3.DiscoveryRequest{Node: envoyNode("plain-1", "edge", "BoringSSL"), TypeUrl: resource.ClusterType})
	first := plain.next(t)
	if got := respondedNames(first); !slices.Equal(got, both) {
		t.Fatalf("plain node's clusters %v, want %v", got, both)
	}
	plain.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resource.ClusterType, VersionInfo: first.GetVersionInfo(), ResponseNonce: first.GetNonce()})

	fips := openSotw(t, h)
	fips.send(t, &discoveryv3.DiscoveryRequest{Node: envoyNode("fips-1", "edge", "BoringSSL-FIPS"), TypeUrl: resource.ClusterType})
	if got := respondedNames(fips.next(t)); !slices.Equal(got, []string{ledger.ClusterName()}) {
		t.Errorf("FIPS node's first clusters %v, want only %s", got, ledger.ClusterName())
	}
	again := plain.next(t)
	if got := respondedNames(again); !slices.Equal(got, []string{ledger.ClusterName()}) {
		t.Errorf("plain node's clusters once a FIPS node joined its fleet: %v, want only %s", got, ledger.ClusterName())
	}
	plain.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resource.ClusterType, VersionInfo: again.GetVersionInfo(), ResponseNonce: again.GetNonce()})

	var refusal translator.FleetRefusal
	for _, r := range h.pub.Refusals() {
		if r.Reason == snapshots.ReasonEnvoyBuildRefuses {
			refusal = r
		}
	}
	want := `fleet edge: Envoy 1.40.0 BoringSSL-FIPS does not accept curve "X25519" (option tlsplane.io/ecdhCurves); cluster shop/payments/8443 is not served to the fleet`
	if refusal.Message != want || refusal.Fleet != "edge" || len(refusal.Objects) != 1 || refusal.Objects[0].Name != payments.Policy() {
		t.Errorf("refusal = %+v, want %q on %s", refusal, want, payments.Policy())
	}
	var builds []string
	for _, c := range h.server.Connections().Connections {
		builds = append(builds, c.Build)
	}
	if want := []string{"Envoy 1.40.0 BoringSSL-FIPS", "Envoy 1.40.0 BoringSSL"}; !slices.Equal(builds, want) {
		t.Errorf("connections' builds %v, want %v (sorted by node)", builds, want)
	}

	if err := fips.stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if got := respondedNames(plain.next(t)); !slices.Equal(got, both) {
		t.Errorf("plain node's clusters after the FIPS node left: %v, want %v", got, both)
	}
	for _, r := range h.pub.Refusals() {
		t.Errorf("refusal left after the FIPS node left: %v", r)
	}
}

// TestRealEnvoyBuildIsChecked proves against Envoy 1.40 (BoringSSL, not
// FIPS) that the build it reports is the one checked: it is sent the
// cluster asking for X25519, which it accepts, and not the one whose
// policy asks for profile fips-140-3, without a NACK.
func TestRealEnvoyBuildIsChecked(t *testing.T) {
	bin := translatortest.EnvoyBinary(t)
	h := start(t, snapshots.Options{})
	pay, led := payments, ledger
	pay.CA, led.CA = selfSignedCA(t), selfSignedCA(t)
	out := st.Tuned(st.Output(pay, led), pay.ClusterName(), &tlsv3.TlsParameters{EcdhCurves: []string{"X25519"}}, "")
	out = st.Tuned(out, led.ClusterName(), &tlsv3.TlsParameters{EcdhCurves: []string{"P-256", "P-384"}}, tlsopts.ProfileFIPS)
	h.publish(t, out, true)
	admin := runEnvoy(t, bin, "GRPC", h.addr)

	waitFor(t, admin, "/config_dump?resource=dynamic_active_clusters", `"X25519"`)
	body := get(t, admin+"/config_dump?resource=dynamic_active_clusters")
	if strings.Contains(body, led.ClusterName()) {
		t.Errorf("Envoy 1.40 BoringSSL holds %s, whose profile is fips-140-3:\n%s", led.ClusterName(), body)
	}
	if builds := h.pub.FleetBuilds("edge"); len(builds) != 1 || builds[0].String() != "Envoy 1.40.0 BoringSSL" {
		t.Errorf("fleet edge's builds = %v, want [Envoy 1.40.0 BoringSSL]", builds)
	}
	select {
	case n := <-h.nacks:
		t.Errorf("Envoy NACKed: %+v", n)
	default:
	}
	var msgs []string
	for _, r := range h.pub.Refusals() {
		msgs = append(msgs, r.Message)
	}
	want := `fleet edge: Envoy 1.40.0 BoringSSL does not accept profile "fips-140-3" (option tlsplane.io/profile): it is not a BoringSSL-FIPS build; cluster bank/ledger/443 is not served to the fleet`
	if !slices.Equal(msgs, []string{want}) {
		t.Errorf("refusals %q, want %q", msgs, want)
	}
}

// get is an Envoy admin page's body.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
