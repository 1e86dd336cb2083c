package perf

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"sync"
	"testing"
	"time"
)

var (
	fanoutStreams    = flag.Int("fanout.streams", 100, "simulated Envoys (one connection and ADS stream each) of BenchmarkFanout/delta and /sotw")
	fanoutClusters   = flag.Int("fanout.clusters", 1000, "policy-targeted Services, so clusters, load assignments and secrets each")
	fanoutPatience   = flag.Duration("fanout.patience", 5*time.Minute, "bound on each wait for the client process: for its next report of initial sync progress, for each update")
	fanoutMixedDelta = flag.Int("fanout.mixed.delta", 5000, "delta streams of BenchmarkFanout/mixed (issue 23: 5,000)")
	fanoutMixedSotw  = flag.Int("fanout.mixed.sotw", 5000, "state-of-the-world streams of BenchmarkFanout/mixed (issue 23: 5,000)")
	fanoutWindows    = flag.String("fanout.windows", "envoy", "the simulated Envoys' HTTP/2 receive windows: envoy (Envoy's defaults, 16 MiB a stream and 24 MiB a connection) or grpc (grpc-go's, growing by BDP probes Envoy does not send)")
	fanoutHeap       = flag.String("fanout.heapprofile", "", "write the server's heap profile, after the measured fan-outs and while it holds the streams, to this file")
	fanoutProfile    = flag.String("fanout.cpuprofile", "", "write the server's CPU profile of the measured fan-outs (from the first Publish to the last stream's update; the translations between them labelled phase=translate) to this file")
)

// fanoutSize is how many streams of each kind one server holds.
type fanoutSize struct{ delta, sotw int }

func (n fanoutSize) streams() int { return n.delta + n.sotw }

// BenchmarkFanout: simulated Envoys (raw ADS streams over real gRPC on
// loopback, one connection each, in a child process so the server's memory
// and CPU are measured alone) subscribe to -fanout.clusters clusters with
// their load assignments and secrets. An operation is one CA rotation
// published the way the pipeline does (the translator's Update with the
// one ConfigMap, then Publish). The server and its streams are set up once per
// sub-benchmark, not again for the measured run after testing's first.
//
// delta and sotw hold -fanout.streams streams of one kind: ns/op runs from
// Publish to the last stream receiving the new secret, p50-ns to the
// median stream. mixed holds -fanout.mixed.delta delta and
// -fanout.mixed.sotw SotW streams against the same server (issue 23):
// delta-last-ms and sotw-last-ms run to the last stream of each kind
// (means over the operations), delta-p50-ms and sotw-p50-ms to the median
// one, ns/op to the last of all.
//
// Every run also reports: publish-ns/op, Publish alone; server-rss-MiB,
// the server's resident memory after the run, server-peak-rss-MiB its
// peak since before the streams (VmHWM), server-heap-MiB its live heap;
// server-cpu-ms/op, the server's CPU time (all threads) from Publish to
// the last stream, publish-cpu-ms/op the part of it until Publish
// returned; and, for sizing replicas, per stream: stream-cpu-us/op (the
// rest, divided by the streams), stream-alloc-B/op (bytes allocated),
// stream-writes/op and stream-reads/op (the server's write and read system
// calls, sockets' included: its transport's flushes and reads),
// stream-KiB (resident memory with the streams minus without, both after
// collecting and returning garbage), stream-sync-cpu-us (the server's CPU
// for the initial sync, per stream), stream-sync-KiB (bytes the server
// wrote for it, per stream). client-rss-MiB and client-cpu-ms/op are the
// client process's, once synchronised and per update: it shares the
// machine's cores with the server.
func BenchmarkFanout(b *testing.B) {
	for _, mode := range []string{"delta", "sotw"} {
		size := fanoutSize{delta: *fanoutStreams}
		if mode == "sotw" {
			size = fanoutSize{sotw: *fanoutStreams}
		}
		runFanout(b, fmt.Sprintf("%s/streams=%d/clusters=%d", mode, *fanoutStreams, *fanoutClusters), gatewayWorld, size, *fanoutClusters)
	}
	size := fanoutSize{delta: *fanoutMixedDelta, sotw: *fanoutMixedSotw}
	runFanout(b, fmt.Sprintf("mixed/delta=%d/sotw=%d/clusters=%d", size.delta, size.sotw, *fanoutClusters), gatewayWorld, size, *fanoutClusters)
}

// BenchmarkMeshFanout is BenchmarkFanout for a mesh (issue 39's costs):
// -mesh.sidecars simulated sidecars, delta as tlsplane's sidecar
// bootstrap asks, spread over MeshInputs' 50 mesh fleets of
// -mesh.services Services, each subscribed to clusters, endpoints,
// secrets, listeners and route configurations. An operation is one
// producer route edit, which changes a route configuration of every
// fleet: ns/op runs from Publish to the last sidecar receiving it, and
// the metrics are BenchmarkFanout's (publish-ns/op: the snapshots of the
// 50 fleets; server-cpu-ms/op: the server's CPU for the whole edit).
func BenchmarkMeshFanout(b *testing.B) {
	size := fanoutSize{delta: *meshSidecars}
	runFanout(b, fmt.Sprintf("sidecars=%d/services=%d", *meshSidecars, *meshServices), meshWorld, size, *meshServices)
}

var (
	meshSidecars = flag.Int("mesh.sidecars", 1000, "simulated sidecars of BenchmarkMeshFanout (issue 39: 1,000)")
	meshServices = flag.Int("mesh.services", 1000, "Services of BenchmarkMeshFanout's mesh (issue 39: 1,000)")
)

// runFanout runs one sub-benchmark on a rig built by its first run.
func runFanout(b *testing.B, name string, world fanoutWorld, size fanoutSize, clusters int) {
	var rig *fanoutRig
	defer func() {
		if rig != nil {
			rig.Close()
		}
	}()
	b.Run(name, func(b *testing.B) {
		if rig == nil {
			rig = newFanoutRig(b, world, size, clusters)
		}
		measureFanout(b, rig)
	})
}

func measureFanout(b *testing.B, rig *fanoutRig) {
	streams := rig.size.streams()
	var publishing, publishingCPU, serving, clientCPU time.Duration
	var allocated uint64
	var reads, writes int64   // system calls, from Publish to the last stream
	var last [2]time.Duration // to the last delta, SotW stream
	var p50s [2][]float64
	var lastAll time.Duration
	stopProfile := func() {}
	defer func() { stopProfile() }()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pprof.Do(context.Background(), pprof.Labels("phase", "translate"), func(context.Context) {
			rig.nextEdit(b)
		})
		rig.arm(b)
		if i == 0 && *fanoutProfile != "" {
			stopProfile = startCPUProfile(b, *fanoutProfile)
		}
		alloc0 := allocatedBytes()
		reads0, writes0, _ := syscallCounts()
		cpu0 := cpuTime()
		start := time.Now()
		if changed, err := rig.pub.Publish(rig.out); err != nil || !changed {
			b.Fatalf("Publish: changed=%v, %v", changed, err)
		}
		publishing += time.Since(start)
		// The streams start on Publish's last step, waking them: what
		// overlaps is a few of them against a whole pass.
		publishingCPU += cpuTime() - cpu0
		a := rig.await(b)
		serving += cpuTime() - cpu0
		allocated += allocatedBytes() - alloc0
		if r, w, err := syscallCounts(); err == nil {
			reads += r - reads0
			writes += w - writes0
		}
		clientCPU += a.clientCPU
		// The two processes' wall clocks are the same machine's.
		var thisLast time.Duration
		for k := range 2 {
			if a.last[k].IsZero() {
				continue
			}
			d := a.last[k].Sub(start)
			last[k] += d
			thisLast = max(thisLast, d)
			p50s[k] = append(p50s[k], float64(a.p50[k].Sub(start).Nanoseconds()))
		}
		lastAll += thisLast
	}
	b.StopTimer()
	stopProfile()
	rss, _ := vmRSS()
	peak, _ := vmHWM()
	// The live heap, apart from what the runtime keeps of the initial
	// sync's peak: RSS is the target, this says how much of it is garbage.
	// Two collections: the first only moves pooled buffers to the victim
	// cache.
	runtime.GC()
	runtime.GC()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	heldRSS := settledRSS()
	if *fanoutHeap != "" {
		writeHeapProfile(b, *fanoutHeap)
	}

	n := float64(b.N)
	b.ReportMetric(float64(lastAll.Nanoseconds())/n, "ns/op")
	if rig.size.delta > 0 && rig.size.sotw > 0 {
		b.ReportMetric(ms(last[0])/n, "delta-last-ms")
		b.ReportMetric(ms(last[1])/n, "sotw-last-ms")
		b.ReportMetric(median(p50s[0])/1e6, "delta-p50-ms")
		b.ReportMetric(median(p50s[1])/1e6, "sotw-p50-ms")
	} else {
		b.ReportMetric(median(slices.Concat(p50s[0], p50s[1])), "p50-ns")
	}
	b.ReportMetric(float64(publishing.Nanoseconds())/n, "publish-ns/op")
	b.ReportMetric(float64(mem.HeapInuse)/(1<<20), "server-heap-MiB")
	b.ReportMetric(float64(rss)/(1<<20), "server-rss-MiB")
	b.ReportMetric(float64(peak)/(1<<20), "server-peak-rss-MiB")
	b.ReportMetric(ms(rig.initialSync), "initial-sync-ms")
	b.ReportMetric(ms(serving)/n, "server-cpu-ms/op")
	b.ReportMetric(ms(publishingCPU)/n, "publish-cpu-ms/op")
	b.ReportMetric(float64((serving-publishingCPU).Microseconds())/n/float64(streams), "stream-cpu-us/op")
	b.ReportMetric(float64(allocated)/n/float64(streams), "stream-alloc-B/op")
	b.ReportMetric(float64(writes)/n/float64(streams), "stream-writes/op")
	b.ReportMetric(float64(reads)/n/float64(streams), "stream-reads/op")
	b.ReportMetric(float64(heldRSS-rig.baseRSS)/1024/float64(streams), "stream-KiB")
	b.ReportMetric(float64(rig.syncCPU.Microseconds())/float64(streams), "stream-sync-cpu-us")
	b.ReportMetric(float64(rig.syncBytes)/1024/float64(streams), "stream-sync-KiB")
	b.ReportMetric(float64(rig.clientRSS)/(1<<20), "client-rss-MiB")
	b.ReportMetric(ms(clientCPU)/n, "client-cpu-ms/op")
}

// startCPUProfile profiles this process into path until the returned
// function is called (once or more).
func startCPUProfile(b *testing.B, path string) func() {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			f.Close()
		})
	}
}

// settledRSS is the resident memory once garbage is collected and
// returned to the system: what the process holds, not what it last peaked
// at.
func settledRSS() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	rss, _ := vmRSS()
	return rss
}

// allocatedBytes is the heap allocated since the process started, read
// without stopping the world.
func allocatedBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}
