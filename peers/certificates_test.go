package peers

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlsplane/tlsplane/backendcerts"
	"github.com/tlsplane/tlsplane/handshakes"
)

// Two replicas share their backend certificate inventories beside their
// handshake windows, each topic in objects of its own: what one replica's
// Envoys saw reaches the other's inventory.
func TestReplicasShareTheirInventories(t *testing.T) {
	client := fake.NewClientset()
	notAfter := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	a := backendcerts.New(backendcerts.Options{})
	b := backendcerts.New(backendcerts.Options{})
	b.Record(backendcerts.Sighting{Node: "e1", Fleet: "edge", Cluster: "shop/pay/443", Host: "10.0.0.7:8443", Version: "TLSv1.3",
		Certificate: backendcerts.Certificate{Subject: "CN=pay.shop", Serial: "0a", NotAfter: notAfter}})
	start := func(o Options) context.CancelFunc {
		o.Client, o.Namespace, o.Group, o.Interval = client, "tlsplane", "tlsplane-status-writer", 20*time.Millisecond
		s, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = s.Run(ctx) }()
		return func() { cancel(); <-done }
	}
	windows := &fakeTracker{peers: map[string]handshakes.Shared{}, export: handshakes.Shared{Window: time.Minute, Windows: []handshakes.SharedWindow{window("shop/pay/443", time.Now())}}}
	defer start(Options{Identity: "replica-a_1", Inventory: a})()
	defer start(Options{Identity: "replica-b_2", Inventory: b})()
	defer start(Options{Identity: "replica-b_2", Tracker: windows})()

	waitFor(t, "a to see b's certificate", func() bool {
		d := a.Debug()
		return len(d) == 1 && d[0].Host == "10.0.0.7:8443" && d[0].NotAfter.Equal(notAfter)
	})
	// The handshake publisher runs on its own timer: a may see b's
	// certificate before b's windows are written.
	waitFor(t, "b's handshake windows to be published", func() bool {
		list, err := client.CoreV1().ConfigMaps("tlsplane").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, cm := range list.Items {
			if strings.HasPrefix(cm.Name, "tlsplane-status-writer-handshakes-replica-b-2-") {
				return true
			}
		}
		return false
	})
	list, err := client.CoreV1().ConfigMaps("tlsplane").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cm := range list.Items {
		names = append(names, fmt.Sprintf("%s %v %d", cm.Name, cm.Labels, len(cm.BinaryData)))
	}
	got := strings.Join(names, "\n")
	if len(list.Items) != 2 || !strings.Contains(got, "tlsplane-status-writer-certificates-replica-b-2-") ||
		!strings.Contains(got, "tlsplane-status-writer-handshakes-replica-b-2-") || !strings.Contains(got, "tlsplane.io/backend-certificates:tlsplane-status-writer") {
		t.Fatalf("objects:\n%s\nwant b's two, one per topic (a has no entries to publish)", got)
	}
}

// An inventory too large for one object keeps the certificates that
// expire first.
func TestEncodeCertificatesKeepsTheFirstToExpire(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var s backendcerts.Shared
	for i := range 20_000 {
		// Names as varied as real ones: gzip must not shrink them away.
		h := fmt.Sprintf("%x", sha256.Sum256([]byte{byte(i), byte(i >> 8), byte(i >> 16)}))
		s.Entries = append(s.Entries, backendcerts.Entry{Fleet: "edge", Cluster: "ns-" + h[:12] + "/svc/443", Host: fmt.Sprintf("10.%d.%d.%d:8443", i>>16, i>>8&255, i&255),
			Certificate: backendcerts.Certificate{Subject: "CN=" + h[12:40], Issuer: "CN=" + h[40:], Serial: h[:32], NotAfter: now.Add(time.Duration(20_000-i) * time.Hour)},
			LastSeen:    now})
	}
	data, err := encodeCertificates(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > maxPublishedBytes {
		t.Fatalf("encoded %d bytes, over %d", len(data), maxPublishedBytes)
	}
	var got backendcerts.Shared
	if err := decodeJSON(data, "certificates.json.gz", &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Entries) == 0 || len(got.Entries) == len(s.Entries) {
		t.Fatalf("kept %d of %d entries", len(got.Entries), len(s.Entries))
	}
	last := s.Entries[len(s.Entries)-1] // the first to expire
	if got.Entries[0].Host != last.Host {
		t.Fatalf("kept %s first, want %s, the first to expire", got.Entries[0].Host, last.Host)
	}
}
