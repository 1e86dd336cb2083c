package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWriteTranslateWorld writes writeGeneratedManifest's world of
// $TLSPLANE_WORLD_SERVICES Services into $TLSPLANE_WORLD_DIR/shop.yaml, for
// timing `tlsplane translate DIR` (docs/performance.md, issue 37); it is
// skipped unless both are set.
func TestWriteTranslateWorld(t *testing.T) {
	dir, n := os.Getenv("TLSPLANE_WORLD_DIR"), os.Getenv("TLSPLANE_WORLD_SERVICES")
	if dir == "" || n == "" {
		t.Skip("TLSPLANE_WORLD_DIR and TLSPLANE_WORLD_SERVICES unset")
	}
	services, err := strconv.Atoi(n)
	if err != nil {
		t.Fatalf("TLSPLANE_WORLD_SERVICES %q: %v", n, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "shop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	size, err := writeGeneratedManifest(f, services, selfSignedCA(t, time.Now().Add(365*24*time.Hour)))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d Services: %d bytes in %s", services, size, dir)
}

// BenchmarkTranslateGenerated is `tlsplane translate DIR` (read, translate,
// publish, render) of writeGeneratedManifest's world, output discarded.
func BenchmarkTranslateGenerated(b *testing.B) {
	for _, services := range []int{1000, 10000} {
		b.Run("services="+strconv.Itoa(services), func(b *testing.B) {
			dir := generatedWorldDir(b, services)
			b.Setenv("SOURCE_DATE_EPOCH", "1700000000")
			b.ResetTimer()
			for b.Loop() {
				var stderr strings.Builder
				if err := runTranslate([]string{dir}, io.Discard, &stderr); err != nil && !errors.As(err, new(*refusedError)) {
					b.Fatal(err)
				}
			}
		})
	}
}

// generatedWorldDir is a temporary directory holding writeGeneratedManifest's
// world of services, its CAs the quickstart's P-256 CA, as cert-manager
// would issue one.
func generatedWorldDir(b *testing.B, services int) string {
	b.Helper()
	dir := b.TempDir()
	f, err := os.Create(filepath.Join(dir, "shop.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	ca, err := os.ReadFile("../../examples/quickstart/certs/ca.crt")
	if err != nil {
		b.Fatal(err)
	}
	_, err = writeGeneratedManifest(f, services, string(ca))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	return dir
}
