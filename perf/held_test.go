package perf

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
)

// BenchmarkHeldAfterStart is what `serve` holds for n Services behind one
// Gateway (GatewayInputs) once started, less the source: the inputs, a
// Translator after its whole first translation and Prepare (what the next
// edit starts from), and the Publisher that published it. An operation is
// that start; heap-MiB is the live heap after a collection with all three
// alive (the inputs alone are inputs-MiB), what BenchmarkServeStart's
// resident memory is about twice of. Run it in a process of its own;
// -scale.heapprofile writes the heap profile there.
func BenchmarkHeldAfterStart(b *testing.B) {
	for _, n := range []int{100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			in := GatewayInputs(n)
			inputs := liveHeap()
			var tr *translator.Translator
			var pub *snapshots.Publisher
			for b.Loop() {
				tr, pub = nil, nil
				tr = translator.New()
				out := tr.Translate(in, nil, benchNow, translator.Options{})
				pub = snapshots.New(snapshots.Options{})
				if _, err := pub.Publish(out); err != nil {
					b.Fatal(err)
				}
				tr.Prepare()
			}
			b.ReportMetric(float64(liveHeap())/(1<<20), "heap-MiB")
			if *scaleHeapProfile != "" {
				writeHeapProfile(b, *scaleHeapProfile)
			}
			b.ReportMetric(float64(inputs)/(1<<20), "inputs-MiB")
			runtime.KeepAlive(in)
			runtime.KeepAlive(tr)
			runtime.KeepAlive(pub)
		})
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
