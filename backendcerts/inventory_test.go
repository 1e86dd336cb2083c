package backendcerts

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/anypb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

var (
	pay     = types.NamespacedName{Namespace: "shop", Name: "pay"}
	other   = types.NamespacedName{Namespace: "shop", Name: "other"}
	origins = map[string][]types.NamespacedName{"shop/pay/443": {pay}, "shop/other/443": {other}}
	t0      = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
)

// clock is a fixed, movable now.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time          { return c.now }
func (c *clock) advance(d time.Duration) { c.now = c.now.Add(d) }

func newInventory(c *clock, flips *atomic.Int32, reg prometheus.Registerer, max int) *Inventory {
	return New(Options{Now: c.Now, Registerer: reg, MaxEntries: max, OnChange: func() { flips.Add(1) }})
}

// statuses is one accepted policy per name, with our entry.
func statuses(keys ...types.NamespacedName) map[types.NamespacedName]gwv1.PolicyStatus {
	out := map[types.NamespacedName]gwv1.PolicyStatus{}
	for _, k := range keys {
		out[k] = gwv1.PolicyStatus{Ancestors: []gwv1.PolicyAncestorStatus{{
			AncestorRef:    gwv1.ParentReference{Name: gwv1.ObjectName(k.Name)},
			ControllerName: translator.DefaultControllerName,
			Conditions:     []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: 4}},
		}}}
	}
	return out
}

// sighting is host of shop/pay/443 presenting a certificate that expires
// after notAfter (from t0), negotiated at version.
func sighting(host string, notAfter time.Duration, version string) Sighting {
	return Sighting{Node: "e1", Fleet: "edge", Cluster: "shop/pay/443", Host: host, Version: version, Cipher: "TLS_AES_128_GCM_SHA256",
		Certificate: Certificate{Subject: "CN=" + host, Issuer: "CN=shop CA", Serial: "0a" + strings.NewReplacer(".", "", ":", "").Replace(host),
			SANs: []string{"DNS:pay.shop"}, NotBefore: t0.Add(-24 * time.Hour), NotAfter: t0.Add(notAfter)}}
}

// certCondition is the condition Apply put on key at now, nil when absent.
func certCondition(t *testing.T, inv *Inventory, key types.NamespacedName, previous translator.PreviousStatus, now time.Time) *metav1.Condition {
	t.Helper()
	in := statuses(pay, other)
	out := inv.Apply(in, origins, previous, "", now)
	if len(in[key].Ancestors[0].Conditions) != 1 {
		t.Fatal("Apply changed its input")
	}
	for _, c := range out[key].Ancestors[0].Conditions {
		if c.Type == ConditionBackendCertificatesValid {
			return &c
		}
	}
	return nil
}

// cluster is a cluster whose TLS allows up to maximum.
func cluster(t testing.TB, name string, maximum tlsv3.TlsParameters_TlsProtocol) *clusterv3.Cluster {
	t.Helper()
	tc, err := anypb.New(&tlsv3.UpstreamTlsContext{CommonTlsContext: &tlsv3.CommonTlsContext{TlsParams: &tlsv3.TlsParameters{
		TlsMinimumProtocolVersion: tlsv3.TlsParameters_TLSv1_2, TlsMaximumProtocolVersion: maximum}}})
	if err != nil {
		t.Fatal(err)
	}
	return &clusterv3.Cluster{Name: name, TransportSocket: &corev3.TransportSocket{Name: "envoy.transport_sockets.tls",
		ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: tc}}}
}

func TestCondition(t *testing.T) {
	const day = 24 * time.Hour
	for _, tc := range []struct {
		name      string
		sightings []Sighting
		// maximum is the cluster's tls_params maximum; unset: TLS_AUTO.
		maximum tlsv3.TlsParameters_TlsProtocol
		status  metav1.ConditionStatus
		reason  string
		message []string
	}{
		{"valid", []Sighting{sighting("10.0.0.7:8443", 90*day, "TLSv1.3"), sighting("10.0.0.8:8443", 60*day, "TLSv1.3")}, 0,
			metav1.ConditionTrue, ReasonValid, []string{`Envoys of fleet "edge" saw 2 backend(s) of cluster shop/pay/443`,
				`the first to expire is "CN=10.0.0.8:8443" of backend 10.0.0.8:8443 (serial 0a100088443), on 2026-03-03T03:04:00Z`}},
		{"expiring within the warning", []Sighting{sighting("10.0.0.7:8443", 90*day, "TLSv1.3"), sighting("10.0.0.8:8443", 10*day, "TLSv1.3")}, 0,
			metav1.ConditionFalse, ReasonExpiring, []string{`Envoys of fleet "edge" saw backend 10.0.0.8:8443 of cluster shop/pay/443 present certificate "CN=10.0.0.8:8443" (serial 0a100088443, issuer "CN=shop CA"), which expires on 2026-01-12T03:04:00Z, within --backend-certificate-expiry-warning (720h0m0s)`}},
		{"expired before expiring", []Sighting{sighting("10.0.0.7:8443", -time.Hour, "TLSv1.3"), sighting("10.0.0.8:8443", 10*day, "TLSv1.3"), sighting("10.0.0.9:8443", -day, "TLSv1.2")}, 0,
			metav1.ConditionFalse, ReasonExpired, []string{`backend 10.0.0.9:8443 of cluster shop/pay/443 present certificate "CN=10.0.0.9:8443"`,
				"which expired on 2026-01-01T03:04:00Z", `; and 1 more backend(s) with an expired certificate: 10.0.0.7:8443 of cluster shop/pay/443 (fleet "edge", "CN=10.0.0.7:8443", notAfter 2026-01-02T02:04:00Z)`}},
		{"below the default preferred version", []Sighting{sighting("10.0.0.7:8443", 90*day, "TLSv1.3"), sighting("10.0.0.8:8443", 90*day, "TLSv1.2")}, 0,
			metav1.ConditionFalse, ReasonBelowPreferredVersion, []string{`Envoys of fleet "edge" negotiated TLSv1.2 (cipher TLS_AES_128_GCM_SHA256) with backend 10.0.0.8:8443 of cluster shop/pay/443, below TLSv1.3, the highest version the policy allows`}},
		{"TLS 1.2 is what a policy with maximumVersion 1.2 prefers", []Sighting{sighting("10.0.0.8:8443", 90*day, "TLSv1.2")}, tlsv3.TlsParameters_TLSv1_2,
			metav1.ConditionTrue, ReasonValid, nil},
		{"below an explicit maximum", []Sighting{sighting("10.0.0.8:8443", 90*day, "TLSv1.1")}, tlsv3.TlsParameters_TLSv1_2,
			metav1.ConditionFalse, ReasonBelowPreferredVersion, []string{"negotiated TLSv1.1", "below TLSv1.2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{now: t0}
			var flips atomic.Int32
			inv := newInventory(c, &flips, prometheus.NewRegistry(), 0)
			inv.SeeClusters([]*clusterv3.Cluster{cluster(t, "shop/pay/443", tc.maximum)})
			for _, s := range tc.sightings {
				inv.Record(s)
			}
			if int(flips.Load()) != len(tc.sightings) {
				t.Errorf("OnChange called %d times for %d new hosts", flips.Load(), len(tc.sightings))
			}
			cond := certCondition(t, inv, pay, nil, t0)
			if cond == nil || cond.Status != tc.status || cond.Reason != tc.reason || cond.ObservedGeneration != 4 {
				t.Fatalf("condition %+v, want %s %s", cond, tc.status, tc.reason)
			}
			for _, m := range tc.message {
				if !strings.Contains(cond.Message, m) {
					t.Errorf("message %q\nlacks %q", cond.Message, m)
				}
			}
			if again := certCondition(t, inv, pay, nil, t0); again.Message != cond.Message {
				t.Errorf("two passes over the same inventory differ:\n%s\n%s", cond.Message, again.Message)
			}
			if o := certCondition(t, inv, other, nil, t0); o != nil {
				t.Errorf("a policy whose clusters nobody saw got %+v", o)
			}
		})
	}
}

// The same sighting again moves the last seen only: no pass, no flip; a
// new certificate or version flips.
func TestOnlyChangesFlip(t *testing.T) {
	c := &clock{now: t0}
	var flips atomic.Int32
	inv := newInventory(c, &flips, nil, 0)
	s := sighting("10.0.0.7:8443", 90*24*time.Hour, "TLSv1.3")
	inv.Record(s)
	for range 5 {
		c.advance(time.Second)
		inv.Record(s)
	}
	if n := flips.Load(); n != 1 {
		t.Fatalf("OnChange called %d times for one host seen 6 times, want 1", n)
	}
	s.Certificate.Serial = "0b"
	inv.Record(s)
	s.Version = "TLSv1.2"
	inv.Record(s)
	if n := flips.Load(); n != 3 {
		t.Fatalf("OnChange called %d times after a new certificate and a new version, want 3", n)
	}
	if d := inv.Debug(); len(d) != 1 || d[0].Serial != "0b" || !d[0].FirstSeen.Equal(t0.Add(5*time.Second)) || !d[0].LastSeen.Equal(c.now) {
		t.Fatalf("debug %+v, want the new certificate first seen when it appeared", d)
	}
}

// A host not seen within the retention is forgotten; a policy that had
// the condition then says NoSightings, one that never had it gets none.
func TestRetention(t *testing.T) {
	c := &clock{now: t0}
	var flips atomic.Int32
	reg := prometheus.NewRegistry()
	inv := newInventory(c, &flips, reg, 0)
	inv.Record(sighting("10.0.0.7:8443", 90*24*time.Hour, "TLSv1.3"))
	first := inv.Apply(statuses(pay, other), origins, nil, "", t0)
	c.advance(DefaultRetention - time.Minute)
	if inv.expire(); len(inv.Debug()) != 1 {
		t.Fatal("an entry went before the retention")
	}
	c.advance(time.Minute)
	if !inv.expire() || len(inv.Debug()) != 0 {
		t.Fatalf("an entry outlived the retention: %+v", inv.Debug())
	}
	if got := gather(t, reg)["tlsplane_backend_certificate_entries"]; got != 0 {
		t.Fatalf("%v entries kept after the retention, want none (memory is bounded by what was seen within it)", got)
	}
	cond := certCondition(t, inv, pay, first, c.now)
	if cond == nil || cond.Status != metav1.ConditionUnknown || cond.Reason != ReasonNoSightings || !strings.Contains(cond.Message, "within --backend-certificate-retention (24h0m0s)") {
		t.Fatalf("after the retention: %+v, want Unknown NoSightings", cond)
	}
	if cond := certCondition(t, inv, other, first, c.now); cond != nil {
		t.Fatalf("a policy never seen got %+v", cond)
	}
}

// The inventory is bounded: the host seen longest ago makes room, counted.
func TestBoundDropsTheOldest(t *testing.T) {
	c := &clock{now: t0}
	var flips atomic.Int32
	reg := prometheus.NewRegistry()
	inv := newInventory(c, &flips, reg, 2)
	inv.Record(sighting("10.0.0.1:8443", 90*24*time.Hour, "TLSv1.3"))
	c.advance(time.Second)
	inv.Record(sighting("10.0.0.2:8443", 90*24*time.Hour, "TLSv1.3"))
	c.advance(time.Second)
	inv.Record(sighting("10.0.0.1:8443", 90*24*time.Hour, "TLSv1.3")) // .2 is now the oldest
	c.advance(time.Second)
	inv.Record(sighting("10.0.0.3:8443", 90*24*time.Hour, "TLSv1.3"))
	var hosts []string
	for _, e := range inv.Debug() {
		hosts = append(hosts, e.Host)
	}
	if strings.Join(hosts, " ") != "10.0.0.1:8443 10.0.0.3:8443" {
		t.Fatalf("kept %v, want .1 and .3 (.2 seen longest ago)", hosts)
	}
	if got := gather(t, reg); got["tlsplane_backend_certificate_evictions_total"] != 1 || got["tlsplane_backend_certificate_sightings_total"] != 4 ||
		got["tlsplane_backend_certificate_entries"] != 2 {
		t.Fatalf("metrics %v, want 1 eviction of 4 sightings, 2 entries", got)
	}
}

// Two replicas, each with its own Envoys: each one's condition counts the
// other's sightings through the shared export, and a forgotten peer's go.
func TestPeersSharesMerge(t *testing.T) {
	c := &clock{now: t0}
	var flipsA, flipsB atomic.Int32
	a, b := newInventory(c, &flipsA, nil, 0), newInventory(c, &flipsB, nil, 0)
	a.Record(sighting("10.0.0.7:8443", 90*24*time.Hour, "TLSv1.3"))
	b.Record(sighting("10.0.0.8:8443", 5*24*time.Hour, "TLSv1.3"))
	// The same host seen by both: the latest sighting wins.
	c.advance(time.Second)
	late := sighting("10.0.0.7:8443", 90*24*time.Hour, "TLSv1.3")
	late.Certificate.Serial, late.Node = "ff", "e2"
	b.Record(late)

	if cond := certCondition(t, a, pay, nil, c.now); cond == nil || cond.Reason != ReasonValid {
		t.Fatalf("a alone: %+v", cond)
	}
	before := flipsA.Load()
	a.SetPeer("replica-b", b.Export())
	if flipsA.Load() != before+1 {
		t.Errorf("a peer's expiring certificate did not flip a's state")
	}
	cond := certCondition(t, a, pay, nil, c.now)
	if cond == nil || cond.Reason != ReasonExpiring || !strings.Contains(cond.Message, "backend 10.0.0.8:8443") {
		t.Fatalf("a with b's share: %+v, want b's expiring host", cond)
	}
	d := a.Debug()
	if len(d) != 2 || d[0].Serial != "ff" || d[0].Node != "e2" {
		t.Fatalf("merged debug %+v, want the host both saw with b's later certificate", d)
	}
	b.SetPeer("replica-a", a.Export())
	if got := certCondition(t, b, pay, nil, c.now); got == nil || got.Message != cond.Message {
		t.Fatalf("the replicas disagree:\n%+v\n%+v", got, cond)
	}
	a.ForgetPeer("replica-b")
	if cond := certCondition(t, a, pay, nil, c.now); cond == nil || cond.Reason != ReasonValid {
		t.Fatalf("a after b was forgotten: %+v", cond)
	}
	// A peer's entries age out with the retention like one's own.
	a.SetPeer("replica-b", b.Export())
	c.advance(DefaultRetention)
	if !a.expire() {
		t.Error("the retention passing flipped nothing")
	}
	if d := a.Debug(); len(d) != 0 {
		t.Fatalf("entries outlived the retention: %+v", d)
	}
}

// A certificate crossing into the warning, then expiring, flips the state
// with the clock alone, and the metric names the earliest notAfter.
func TestClockFlipsAndMetric(t *testing.T) {
	c := &clock{now: t0}
	var flips atomic.Int32
	reg := prometheus.NewRegistry()
	inv := New(Options{Now: c.Now, Registerer: reg, ExpiryWarning: time.Hour, Retention: 48 * time.Hour, OnChange: func() { flips.Add(1) }})
	inv.Record(sighting("10.0.0.7:8443", 2*time.Hour, "TLSv1.3"))
	inv.Record(sighting("10.0.0.8:8443", 3*time.Hour, "TLSv1.3"))
	inv.expire()
	c.advance(59 * time.Minute)
	if inv.expire() {
		t.Fatal("flipped before the warning")
	}
	c.advance(2 * time.Minute)
	if !inv.expire() {
		t.Fatal("did not flip entering the warning")
	}
	if cond := certCondition(t, inv, pay, nil, c.now); cond.Reason != ReasonExpiring {
		t.Fatalf("%+v", cond)
	}
	c.advance(time.Hour)
	if !inv.expire() {
		t.Fatal("did not flip on expiry")
	}
	if cond := certCondition(t, inv, pay, nil, c.now); cond.Reason != ReasonExpired {
		t.Fatalf("%+v", cond)
	}
	key := `tlsplane_backend_certificate_expiry_timestamp_seconds{cluster="shop/pay/443",namespace="shop",policy="pay"}`
	if got := gather(t, reg); got[key] != float64(t0.Add(2*time.Hour).Unix()) {
		t.Fatalf("metrics %v, want the earliest notAfter", got)
	}
	// The policy deleted: its series goes.
	inv.Apply(statuses(other), origins, nil, "", c.now)
	if got := gather(t, reg); got[key] != 0 {
		t.Fatalf("a deleted policy's series stayed: %v", got)
	}
}

// gather reads every series as name{labels} → value, without
// prometheus/testutil, which would add a dependency for a few lines.
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			out[f.GetName()+labels(m)] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return out
}

func labels(m *dto.Metric) string {
	if len(m.GetLabel()) == 0 {
		return ""
	}
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+"="+`"`+l.GetValue()+`"`)
	}
	return "{" + strings.Join(parts, ",") + "}"
}
