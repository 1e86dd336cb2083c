package dirsource

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/manifests"
)

// serviceManifest is one Service with its EndpointSlice, the shape of a
// directory of many Services; gen changes the slice's addresses (40,000
// generations before they repeat).
func serviceManifest(i, gen int) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {namespace: team-%[1]d, name: svc-%[2]d}
spec:
  ports: [{name: https, port: 443}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  namespace: team-%[1]d
  name: svc-%[2]d-x
  labels: {kubernetes.io/service-name: svc-%[2]d}
addressType: IPv4
ports: [{name: https, port: 8443}]
endpoints:
- addresses: ["10.%[3]d.%[4]d.%[5]d"]
- addresses: ["10.%[3]d.%[4]d.%[6]d"]
`, i%50, i, i/250%250, i%250, 10+gen%200, 10+gen/200%200)
}

// writeAtomically writes path through a hidden temporary file and a
// rename, as editors and ConfigMap-less deployment tools do.
func writeAtomically(tb testing.TB, path, content string) {
	tb.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkEditOneFile: one manifest file among n is rewritten; an
// operation runs from its rename to the source's changed callback, so it
// is the read of that one file: a file renamed into place is complete, so
// the source does not wait for its settle delay.
func BenchmarkEditOneFile(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			for i := range n {
				writeAtomically(b, filepath.Join(dir, fmt.Sprintf("svc-%d.yaml", i)), serviceManifest(i, 0))
			}
			src, err := New(Options{Dir: dir, Parse: manifests.Parser(func(string) {})})
			if err != nil {
				b.Fatal(err)
			}
			changed := make(chan struct{}, 1)
			runUntilCleanup(b, src, changed)
			select {
			case <-src.Synced():
			case <-time.After(2 * time.Minute):
				b.Fatal("not synced within 2m")
			}
			gen := 0
			for b.Loop() {
				gen++
				i := gen * 7919 % n
				writeAtomically(b, filepath.Join(dir, fmt.Sprintf("svc-%d.yaml", i)), serviceManifest(i, gen))
				select {
				case <-changed:
				case <-time.After(10 * time.Second):
					b.Fatalf("edit %d of svc-%d not signalled within 10s", gen, i)
				}
			}
		})
	}
}

// BenchmarkResyncWalk: the whole synchronous read of a directory of n
// files, none changed since it was read: what the start-up read and a
// change of the directories themselves cost (the periodic walk runs off
// the event loop, BenchmarkEditDuringResync).
func BenchmarkResyncWalk(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			dir := oldFiles(b, n)
			src, err := New(Options{Dir: dir, Parse: manifests.Parser(func(string) {})})
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := src.rescan(nil); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if changed, _, err := src.rescan(nil); err != nil || changed {
					b.Fatalf("walk: changed %v, %v", changed, err)
				}
			}
		})
	}
}
