package dirsource

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/crds"
	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/perf/world"
)

// worldCA stands for the generated world's CA bundle: reading does not
// look inside it.
const worldCA = "-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIBATAKBggqhkjOPQQDAjAAMB4XDTI2MDEwMTAwMDAwMFoX\n-----END CERTIFICATE-----\n"

// writeWorld writes the generated world of n Services (perf/world) as
// serve --dir reads it in BenchmarkServeStart: the Gateway's file, then
// files of perFile Services each.
func writeWorld(tb testing.TB, dir string, n, perFile int) {
	tb.Helper()
	write := func(name string, fill func(w *bufio.Writer) error) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			tb.Fatal(err)
		}
		w := bufio.NewWriter(f)
		if err := fill(w); err != nil {
			tb.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			tb.Fatal(err)
		}
		if err := f.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	write("gateway.yaml", func(w *bufio.Writer) error { return world.WriteGateway(w) })
	for from := 0; from < n; from += perFile {
		write(fmt.Sprintf("services-%06d.yaml", from), func(w *bufio.Writer) error {
			return world.WriteServices(w, from, min(from+perFile, n), worldCA, 8443)
		})
	}
}

// BenchmarkReadAdmittedWorld is issue 38's figure: serve --dir's first
// read of a directory of 10,000 Services, each with its CA ConfigMap,
// BackendTLSPolicy, EndpointSlice and HTTPRoute (one Service a file, as
// BenchmarkServeStart writes them), its 20,001 Gateway API objects
// admitted against the experimental CRDs; "unadmitted" is the same read
// without admission, so the difference is admission's share.
func BenchmarkReadAdmittedWorld(b *testing.B) {
	const n = 10000
	for _, perFile := range []int{1, 100} {
		dir := b.TempDir()
		writeWorld(b, dir, n, perFile)
		for _, c := range []struct {
			name    string
			channel string
		}{{"admitted", crds.Experimental}, {"unadmitted", manifests.NoCRDs}} {
			b.Run(fmt.Sprintf("services=%d/perfile=%d/%s", n, perFile, c.name), func(b *testing.B) {
				limits := manifests.DefaultLimits
				limits.CRDChannel = c.channel
				if c.channel != manifests.NoCRDs {
					if _, err := crds.Load(c.channel); err != nil { // the channel declared outside the figure; the first read compiles the versions its kinds use, as serve's does
						b.Fatal(err)
					}
				}
				for b.Loop() {
					src, err := New(Options{Dir: dir, Limits: limits, Parse: limits.Parser(func(string) {})})
					if err != nil {
						b.Fatal(err)
					}
					start := time.Now()
					if _, _, err := src.rescan(nil); err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms/read")
					if got := len(src.Inputs().HTTPRoutes); got != n {
						b.Fatalf("%d HTTPRoutes read, want %d", got, n)
					}
				}
			})
		}
	}
}
