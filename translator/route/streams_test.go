package route

import (
	"slices"
	"testing"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// TestStreamBackendsXBackendRaw: a stream route's XBackend goes to the
// XBackend's raw cluster on every listener, a terminating TLS listener
// included (its HTTP cluster may offer ALPN h2, which a client's stream
// does not speak); a Service's port cluster stays for a terminating
// listener, and becomes raw on the others; an unresolved share stays "".
func TestStreamBackendsXBackendRaw(t *testing.T) {
	xb := plan.XBackendClusterName("shop", "pay", 443)
	svc := plan.ClusterName("shop", "ledger", 443)
	// As resolveXBackend leaves a stream route that names the XBackend.
	rs := &Route{Kind: input.KindTLSRoute, Stream: []plan.WeightedBackend{{Cluster: xb, Weight: 1}, {Cluster: svc, Weight: 1}, {Weight: 1}},
		xbackendStreams: map[string]bool{xb: true}}
	for _, tc := range []struct {
		raw  bool
		want []string
	}{
		{raw: false, want: []string{plan.RawOf(xb), svc, ""}},
		{raw: true, want: []string{plan.RawOf(xb), plan.RawOf(svc), ""}},
	} {
		var got []string
		for _, b := range rs.StreamBackends(tc.raw) {
			got = append(got, b.Cluster)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("StreamBackends(raw=%v) = %q, want %q", tc.raw, got, tc.want)
		}
		if clusters := rs.Clusters(tc.raw); !slices.Equal(clusters, slices.DeleteFunc(slices.Clone(tc.want), func(s string) bool { return s == "" })) {
			t.Errorf("Clusters(raw=%v) = %q, want the stream backends' %q", tc.raw, clusters, tc.want)
		}
	}
	if rs.Stream[0].Cluster != xb {
		t.Errorf("StreamBackends changed the route's own Stream: %q", rs.Stream[0].Cluster)
	}
}
