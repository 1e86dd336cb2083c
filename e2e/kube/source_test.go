package kube

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/informers"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// TestSourceSignalsOnlyRelevantChanges runs the informers source in
// process against the real API server: Synced closes after the initial
// lists; a ConfigMap nobody refers to, or an update that changes nothing,
// signals nothing; a referenced one does, and Inputs carries only
// referenced ConfigMaps, slimmed to ca.crt.
func TestSourceSignalsOnlyRelevantChanges(t *testing.T) {
	c := adminClients(t)
	ns := newNamespace(t, c)
	createService(t, c, ns, "pay")
	createPolicy(t, c, policy(ns, "pay", "pay", "", "ca", "pay.example.com"))

	src, err := informers.New(informers.Options{Client: c.kube, Gateway: c.gateway, Namespaces: []string{ns}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var signals atomic.Int64
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, func() { signals.Add(1) }) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("source did not stop within 10s of cancel")
		}
	})
	select {
	case <-src.Synced():
	case <-time.After(30 * time.Second):
		t.Fatal("source not synced after 30s")
	}
	if in := src.Inputs(); len(in.Policies) != 1 || len(in.Services) != 1 || len(in.ConfigMaps) != 0 {
		t.Fatalf("first view: %d policies, %d services, %d configmaps; want 1, 1, 0", len(in.Policies), len(in.Services), len(in.ConfigMaps))
	}

	quiet := func(what string) {
		t.Helper()
		before := signals.Load()
		time.Sleep(time.Second)
		if n := signals.Load() - before; n != 0 {
			t.Fatalf("%s: %d change signals, want none", what, n)
		}
	}
	signalled := func(what string) {
		t.Helper()
		eventually(t, 10*time.Second, what+" signals a change", func() error {
			if signals.Load() == 0 {
				return context.DeadlineExceeded
			}
			return nil
		})
		signals.Store(0)
	}

	unrelated := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unrelated"}, Data: map[string]string{"ca.crt": "x"}}
	if _, err := c.kube.CoreV1().ConfigMaps(ns).Create(ctx, unrelated, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	quiet("ConfigMap nobody refers to")

	createCAConfigMap(t, c, ns, "ca", string(harness.NewAuthority(t, "source CA").PEM))
	signalled("referenced ConfigMap created")
	in := src.Inputs()
	if len(in.ConfigMaps) != 1 || in.ConfigMaps[0].Name != "ca" {
		t.Fatalf("inputs hold ConfigMaps %v, want only the referenced ca", in.ConfigMaps)
	}

	// A label-only edit of the referenced ConfigMap changes its
	// resourceVersion; a re-apply of identical content does not even reach
	// the watch. Both must publish nothing new for unrelated objects.
	cm, err := c.kube.CoreV1().ConfigMaps(ns).Get(ctx, "unrelated", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["other"] = "y"
	if _, err := c.kube.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	quiet("unreferenced ConfigMap edited")

	setCA(t, c, ns, "ca", string(harness.NewAuthority(t, "rotated CA").PEM))
	signalled("referenced ConfigMap edited")
}
