package perf

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/tlsplane/tlsplane/translator"
)

var scaleHeapProfile = flag.String("scale.heapprofile", "", "write a heap profile where BenchmarkTranslateScale measures (go test's -memprofile is written after the inputs are gone)")

// BenchmarkTranslateScale: what n policy-targeted Services cost to hold (issue
// 15's 100,000 row). An operation is a warm translation, as the pipeline
// runs one; after the loop, with the inputs, the Translator's memory and
// the last Output still alive: heap-MiB is the live heap after a
// collection, rss-MiB the process's resident memory then and peak-rss-MiB
// its high-water mark (VmHWM), the cold first translation's garbage
// included. Run it in a process of its own (hack/bench.sh does): resident
// memory counts whatever ran before in the same process.
func BenchmarkTranslateScale(b *testing.B) {
	for _, n := range []int{100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			in := Inputs(n)
			tr := translator.New()
			out := tr.Translate(in, nil, benchNow, translator.Options{})
			b.ReportAllocs()
			for b.Loop() {
				out = tr.Translate(in, translator.PreviousStatus(out.Statuses), benchNow, translator.Options{})
				if len(out.Clusters) != n || len(out.Secrets) != n || len(out.Endpoints) != n {
					b.Fatalf("got %d clusters, %d secrets, %d load assignments, want %d each", len(out.Clusters), len(out.Secrets), len(out.Endpoints), n)
				}
			}
			b.StopTimer()
			runtime.GC()
			var mem runtime.MemStats
			runtime.ReadMemStats(&mem)
			rss, err := vmRSS()
			if err != nil {
				b.Fatal(err)
			}
			peak, err := procStatusBytes("VmHWM:")
			if err != nil {
				b.Fatal(err)
			}
			if *scaleHeapProfile != "" {
				writeHeapProfile(b, *scaleHeapProfile)
			}
			b.ReportMetric(float64(mem.HeapAlloc)/(1<<20), "heap-MiB")
			b.ReportMetric(float64(rss)/(1<<20), "rss-MiB")
			b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MiB")
			// What the figures hold: without these the collector could free
			// them before ReadMemStats.
			runtime.KeepAlive(in)
			runtime.KeepAlive(tr)
			runtime.KeepAlive(out)
		})
	}
}

func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
}
