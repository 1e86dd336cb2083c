package perf

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
	"github.com/tlsplane/tlsplane/perf/world"
)

var (
	serveStartServices = flag.Int("servestart.services", 100000, "Services of BenchmarkServeStart's world")
	serveStartPerFile  = flag.Int("servestart.perfile", 1, "Services per manifest file of BenchmarkServeStart's world")
	serveStartEdits    = flag.Int("servestart.edits", 10, "edits renamed into place after BenchmarkServeStart's settle")
	serveStartSettle   = flag.Duration("servestart.settle", 30*time.Second, "how long after ready BenchmarkServeStart reads the steady resident memory")
	serveStartTimeout  = flag.Duration("servestart.timeout", 5*time.Minute, "bound on BenchmarkServeStart's wait for /readyz")
)

// worldEndpointPort is the EndpointSlice port of the generated world; an
// edit moves one Service's to worldEndpointPort+1+edit.
const worldEndpointPort = 8443

// BenchmarkServeStart is issue 37's "100,000 Services from a directory"
// row: writeGeneratedManifest's world (cmd/tlsplane; world.WriteServices:
// per Service a Service, CA ConfigMap, BackendTLSPolicy, EndpointSlice and
// HTTPRoute behind one Gateway) written to a directory, -servestart.perfile
// Services a file, then the real `tlsplane serve --dir` started on it with
// no Envoy. It reads /readyz every 50 ms and the process's
// /proc/PID/status every 100 ms, waits -servestart.settle, then renames
// -servestart.edits edited files into place one at a time (each moves one
// EndpointSlice's port) and reads what tlsplane's /metrics say each pass took.
//
// Metrics: ready-s (process start → /readyz 200), first-translate-s and
// first-publish-s (the first pass, from /metrics), start-and-read-s (the
// rest of ready-s: the process's start, the CRDs, the first read),
// peak-rss-MiB (VmHWM at the end, edits included), ready-rss-MiB (VmRSS at
// ready), steady-rss-MiB (VmRSS after the settle), heap-inuse-MiB (the Go
// runtime's, after the settle), edit-snapshot-ms p50 and max (one pass's
// translate + publish, from the histograms' sums: what
// BenchmarkEditToSnapshot measures in process), edit-read-ms (the source's
// read of the renamed file), manifest-MB and files.
func BenchmarkServeStart(b *testing.B) {
	n, perFile := *serveStartServices, *serveStartPerFile
	if n <= 0 || perFile <= 0 || *serveStartEdits < 0 {
		b.Fatal("-servestart.services and -servestart.perfile must be positive, -servestart.edits not negative")
	}
	b.Run(fmt.Sprintf("dir/services=%d", n), func(b *testing.B) {
		bin := harness.TLSPlaneBin(b)
		for b.Loop() {
			serveStart(b, bin, n, perFile)
		}
	})
}

func serveStart(b *testing.B, bin string, n, perFile int) {
	b.StopTimer()
	defer b.StartTimer() // b.Loop needs it running
	dir := b.TempDir()
	manifests := filepath.Join(dir, "manifests")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		b.Fatal(err)
	}
	ca := string(harness.NewAuthority(b, "perf-servestart-ca").PEM)
	size, files := writeWorld(b, manifests, n, perFile, ca)
	b.Logf("world: %d Services in %d files, %.1f MB; load %s; MemAvailable %d MiB", n, files, float64(size)/1e6, loadAverage(), memAvailableMiB())

	admin := harness.FreePort(b)
	base := "http://127.0.0.1:" + strconv.Itoa(admin)
	start := time.Now()
	tp := harness.Start(b, dir, "tlsplane", bin, "serve", "--dir", manifests,
		"--xds-address", "127.0.0.1:"+strconv.Itoa(harness.FreePort(b)),
		"--admin-address", "127.0.0.1:"+strconv.Itoa(admin), "--listener-address", "127.0.0.1", "--log-level", "warn")
	sampler := sampleMemory(tp.PID(), 100*time.Millisecond)
	defer sampler.stop()

	if err := harness.Eventually(*serveStartTimeout, 50*time.Millisecond, func() error {
		if tp.Exited() {
			return fmt.Errorf("tlsplane exited:\n%s", tp.LogTail(20))
		}
		_, err := harness.HTTPGet(base + "/readyz")
		return err
	}); err != nil {
		b.Fatalf("tlsplane serve not ready: %v", err)
	}
	ready := time.Since(start)
	readyRSS := procStatusMiB(tp.PID(), "VmRSS:")
	first := tlsplaneMetrics(b, admin)
	b.Logf("ready after %v: VmRSS %.0f MiB, VmHWM %.0f MiB; load %s", ready.Round(time.Millisecond), readyRSS, procStatusMiB(tp.PID(), "VmHWM:"), loadAverage())

	time.Sleep(*serveStartSettle)
	steadyRSS := procStatusMiB(tp.PID(), "VmRSS:")
	settled := tlsplaneMetrics(b, admin)
	b.Logf("after %v: VmRSS %.0f MiB, heap in use %.0f MiB; load %s", *serveStartSettle, steadyRSS, settled["go_memstats_heap_inuse_bytes"]/(1<<20), loadAverage())

	var passes, reads []float64
	before := settled
	for e := range *serveStartEdits {
		i := editedService(e, n)
		editService(b, manifests, i, perFile, n, ca, worldEndpointPort+1+e)
		var after map[string]float64
		if err := harness.Eventually(10*time.Second, 200*time.Millisecond, func() error {
			after = tlsplaneMetrics(b, admin)
			if got := after["tlsplane_translation_duration_seconds_count"] - before["tlsplane_translation_duration_seconds_count"]; got < 1 {
				return fmt.Errorf("no pass after the edit of svc-%d", i)
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		count := after["tlsplane_translation_duration_seconds_count"] - before["tlsplane_translation_duration_seconds_count"]
		took := (after["tlsplane_translation_duration_seconds_sum"] - before["tlsplane_translation_duration_seconds_sum"]) +
			(after["tlsplane_snapshot_publish_duration_seconds_sum"] - before["tlsplane_snapshot_publish_duration_seconds_sum"])
		passes = append(passes, took*1000/count)
		reads = append(reads, meanSince(before, after, "tlsplane_source_read_duration_seconds")*1000)
		before = after
	}
	peak := procStatusMiB(tp.PID(), "VmHWM:")
	if tp.Exited() {
		b.Fatalf("tlsplane exited:\n%s", tp.LogTail(20))
	}
	if strings.Contains(tp.Log(), "level=ERROR") {
		b.Errorf("tlsplane logged errors:\n%s", tp.LogTail(20))
	}
	b.Logf("edit → snapshot (translate + publish), in edit order, ms: %.3f; source read ms: %.3f; peak VmHWM %.0f MiB (sampled VmRSS max %.0f MiB); load %s",
		passes, reads, peak, sampler.stop(), loadAverage())

	b.ReportMetric(ready.Seconds(), "ready-s")
	// The source's histogram counts reads after events, not the first
	// walk: what precedes the first translation is start, CRDs and read.
	b.ReportMetric(ready.Seconds()-first["tlsplane_translation_duration_seconds_sum"]-first["tlsplane_snapshot_publish_duration_seconds_sum"], "start-and-read-s")
	b.ReportMetric(first["tlsplane_translation_duration_seconds_sum"], "first-translate-s")
	b.ReportMetric(first["tlsplane_snapshot_publish_duration_seconds_sum"], "first-publish-s")
	b.ReportMetric(peak, "peak-rss-MiB")
	b.ReportMetric(readyRSS, "ready-rss-MiB")
	b.ReportMetric(steadyRSS, "steady-rss-MiB")
	b.ReportMetric(settled["go_memstats_heap_inuse_bytes"]/(1<<20), "heap-inuse-MiB")
	if len(passes) > 0 {
		slices.Sort(passes)
		slices.Sort(reads)
		b.ReportMetric(percentile(passes, 50), "edit-snapshot-p50-ms")
		b.ReportMetric(slices.Max(passes), "edit-snapshot-max-ms")
		b.ReportMetric(percentile(reads, 50), "edit-read-p50-ms")
	}
	b.ReportMetric(float64(size)/1e6, "manifest-MB")
	b.ReportMetric(float64(files), "files")
}

// writeWorld writes the generated world into dir: gateway.yaml, then
// Services perFile a file (services-<first>.yaml). It returns the bytes
// and files written.
func writeWorld(b *testing.B, dir string, n, perFile int, ca string) (size int64, files int) {
	write := func(name string, fill func(*bufio.Writer) error) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 1<<16)
		err = fill(w)
		if err == nil {
			err = w.Flush()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
		st, err := os.Stat(f.Name())
		if err != nil {
			b.Fatal(err)
		}
		size += st.Size()
		files++
	}
	write("gateway.yaml", func(w *bufio.Writer) error { return world.WriteGateway(w) })
	for from := 0; from < n; from += perFile {
		write(worldFile(from), func(w *bufio.Writer) error {
			return world.WriteServices(w, from, min(from+perFile, n), ca, worldEndpointPort)
		})
	}
	return size, files
}

func worldFile(from int) string { return fmt.Sprintf("services-%06d.yaml", from) }

// editService rewrites the file holding Service i with its EndpointSlice's
// port moved to port (the file's other Services unchanged), atomically: a
// hidden temporary file, then a rename.
func editService(b *testing.B, dir string, i, perFile, n int, ca string, port int) {
	from := i / perFile * perFile
	var buf strings.Builder
	if err := world.WriteServices(&buf, from, i, ca, worldEndpointPort); err != nil {
		b.Fatal(err)
	}
	if err := world.WriteServices(&buf, i, i+1, ca, port); err != nil {
		b.Fatal(err)
	}
	if err := world.WriteServices(&buf, i+1, min(from+perFile, n), ca, worldEndpointPort); err != nil {
		b.Fatal(err)
	}
	tmp := filepath.Join(dir, ".edit.tmp")
	if err := os.WriteFile(tmp, []byte(buf.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, worldFile(from))); err != nil {
		b.Fatal(err)
	}
}

// memorySampler reads a process's VmRSS every interval and keeps the most.
type memorySampler struct {
	once sync.Once
	quit chan struct{}
	done chan float64
}

func sampleMemory(pid int, interval time.Duration) *memorySampler {
	s := &memorySampler{quit: make(chan struct{}), done: make(chan float64, 1)}
	go func() {
		most := 0.0
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			most = max(most, procStatusMiB(pid, "VmRSS:"))
			select {
			case <-s.quit:
				s.done <- most
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the most VmRSS seen, in MiB.
func (s *memorySampler) stop() float64 {
	s.once.Do(func() { close(s.quit) })
	v := <-s.done
	s.done <- v
	return v
}

// memAvailableMiB is the machine's MemAvailable, for the log: a run of
// 100,000 Services wants several GiB free.
func memAvailableMiB() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb >> 10
		}
	}
	return 0
}
