package perf

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/xds"
)

var (
	stormStreams  = flag.Int("storm.streams", 1000, "streams of BenchmarkReconnectStorm, half delta and half SotW, interleaved (issue 37: 1,000)")
	stormDeadline = flag.Duration("storm.deadline", time.Minute, "bound on the storm: the client process reports what it has after this, complete or not (issue 37's target is 10 s)")
	stormProfile  = flag.String("storm.cpuprofile", "", "write the server's CPU profile of the storm (from the client process's start to its report) to this file")
)

// BenchmarkReconnectStorm: -storm.streams simulated Envoys (raw ADS
// streams over real gRPC on loopback, one connection each, in a child
// process so the server's memory and CPU are measured alone), half delta
// and half SotW, interleaved, all dial one server at once, as when a
// replica takes over another's fleet (issue 37). The server serves
// -fanout.clusters policy-targeted Services (clusters, load assignments
// and secrets each), published before the storm. An operation is one
// storm against a new server; -benchtime 1x is the intended run.
//
// Per stream, from its own dial: first-p50-ms and first-p99-ms, to its
// first response; complete-p50-ms, complete-p99-ms, complete-last-ms, to
// the response that completes every type (each type's first response
// carries the whole type: wildcard, one message each), also per kind
// (delta-complete-p99-ms, sotw-complete-p99-ms); incomplete, the streams
// without every type at -storm.deadline (their times are left out of the
// percentiles). The server's: server-base-rss-MiB, resident memory with
// the snapshot published and no stream, settled; server-peak-rss-MiB, its
// peak during the storm (VmHWM, reset before it); server-rss-MiB, resident
// memory as the last stream completes, server-settled-rss-MiB the same
// once garbage is collected and returned, streams still held;
// server-cpu-ms, its CPU time (all threads) from the client process's
// start to its report; server-written-MiB, the bytes it wrote meanwhile
// (write(2) and kin, sockets included); ns/op, that wall time (the client
// process's start included). client-rss-MiB and client-cpu-ms (its
// whole life up to its report) are the client process's. The load
// average before and after is logged: the client process shares the
// machine's cores with the server.
func BenchmarkReconnectStorm(b *testing.B) {
	name := fmt.Sprintf("streams=%d/clusters=%d", *stormStreams, *fanoutClusters)
	b.Run(name, func(b *testing.B) {
		logLoad(b, "before")
		var all []stormStream
		var m stormServer
		for range b.N {
			streams, s := runStorm(b, *stormStreams, *fanoutClusters)
			all = append(all, streams...)
			m.cpu += s.cpu
			m.clientCPU += s.clientCPU
			m.written += s.written
			m.base, m.peak, m.rss, m.settled, m.client = max(m.base, s.base), max(m.peak, s.peak), max(m.rss, s.rss), max(m.settled, s.settled), max(m.client, s.client)
		}
		logLoad(b, "after")
		reportStorm(b, all, m)
	})
}

// stormServer is what one storm cost the server (and, client, the client
// process's RSS), in bytes and CPU time.
type stormServer struct {
	base, peak, rss, settled, client, written int64
	cpu, clientCPU                            time.Duration
}

// runStorm serves Inputs(clusters) on loopback, starts a client process
// whose streams all dial it at once, and returns what each stream saw.
func runStorm(b *testing.B, streams, clusters int) ([]stormStream, stormServer) {
	b.StopTimer()
	if err := ensureFiles(streams); err != nil {
		b.Fatal(err)
	}
	pub := snapshots.New(snapshots.Options{})
	if _, err := pub.Publish(translator.New().Translate(Inputs(clusters), nil, benchNow, translator.Options{})); err != nil {
		b.Fatal(err)
	}
	srv := xds.NewServer(pub, xds.Options{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(lis)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Stop(ctx)
	}()
	var m stormServer
	m.base = settledRSS()
	if err := resetPeakRSS(); err != nil {
		b.Logf("server-peak-rss-MiB counts from the process's start: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestStormClients$", "-test.bench=^$", "-test.timeout=0")
	child.Env = append(os.Environ(), envAddr+"="+lis.Addr().String(),
		envStormStreams+"="+strconv.Itoa(streams), envStormDeadline+"="+stormDeadline.String())
	child.Stderr = os.Stderr
	toChild, err := child.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	fromChild, err := child.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		toChild.Close() // the client process holds its streams until then
		cancel()
		child.Wait()
	}()
	stopProfile := func() {}
	if *stormProfile != "" {
		stopProfile = startCPUProfile(b, *stormProfile)
	}
	defer stopProfile()
	cpu0 := cpuTime()
	written0, _ := writtenBytes()
	b.StartTimer()
	if err := child.Start(); err != nil {
		b.Fatal(err)
	}
	got, clientRSS, clientCPU := readStorm(b, fromChild, streams)
	b.StopTimer()
	m.cpu = cpuTime() - cpu0
	if w, err := writtenBytes(); err == nil {
		m.written = w - written0
	}
	m.clientCPU = clientCPU
	stopProfile()
	m.peak, _ = vmHWM()
	m.rss, _ = vmRSS()
	m.settled = settledRSS()
	m.client = clientRSS
	return got, m
}

// readStorm reads the client process's report, within -storm.deadline
// and -fanout.patience.
func readStorm(b *testing.B, r interface{ Read([]byte) (int, error) }, streams int) ([]stormStream, int64, time.Duration) {
	type report struct {
		streams []stormStream
		rss     int64
		cpu     time.Duration
		err     error
	}
	done := make(chan report, 1)
	go func() {
		var rep report
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) >= 7 && f[0] == "stream":
				first, _ := strconv.ParseInt(f[3], 10, 64)
				complete, _ := strconv.ParseInt(f[4], 10, 64)
				resources, _ := strconv.Atoi(f[5])
				s := stormStream{delta: f[2] == "delta", first: time.Duration(first), complete: time.Duration(complete), resources: resources}
				if e := strings.Join(f[6:], " "); e != "-" {
					s.err = fmt.Errorf("%s", e)
				}
				rep.streams = append(rep.streams, s)
			case len(f) == 3 && f[0] == "storm":
				rep.rss, _ = strconv.ParseInt(f[1], 10, 64)
				cpu, _ := strconv.ParseInt(f[2], 10, 64)
				rep.cpu = time.Duration(cpu)
				done <- rep
				return
			}
		}
		rep.err = fmt.Errorf("client process ended before its report: %v", sc.Err())
		done <- rep
	}()
	select {
	case rep := <-done:
		if rep.err != nil {
			b.Fatal(rep.err)
		}
		if len(rep.streams) != streams {
			b.Fatalf("client process reported %d streams of %d", len(rep.streams), streams)
		}
		return rep.streams, rep.rss, rep.cpu
	case <-time.After(*stormDeadline + *fanoutPatience):
		b.Fatalf("no report from the client process in %v", *stormDeadline+*fanoutPatience)
		return nil, 0, 0
	}
}

// reportStorm reports the streams' percentiles and the server's cost.
func reportStorm(b *testing.B, streams []stormStream, m stormServer) {
	var first, complete []time.Duration
	var kind [2][]time.Duration
	incomplete := 0
	for _, s := range streams {
		k := 1
		if s.delta {
			k = 0
		}
		if s.first > 0 {
			first = append(first, s.first)
		}
		if s.complete == 0 {
			incomplete++
			if s.err != nil && incomplete <= 5 {
				b.Logf("incomplete stream (delta=%v): %v", s.delta, s.err)
			}
			continue
		}
		complete = append(complete, s.complete)
		kind[k] = append(kind[k], s.complete)
	}
	b.ReportMetric(ms(percentile(first, 50)), "first-p50-ms")
	b.ReportMetric(ms(percentile(first, 99)), "first-p99-ms")
	b.ReportMetric(ms(percentile(complete, 50)), "complete-p50-ms")
	b.ReportMetric(ms(percentile(complete, 99)), "complete-p99-ms")
	b.ReportMetric(ms(percentile(complete, 100)), "complete-last-ms")
	b.ReportMetric(ms(percentile(kind[0], 99)), "delta-complete-p99-ms")
	b.ReportMetric(ms(percentile(kind[1], 99)), "sotw-complete-p99-ms")
	b.ReportMetric(float64(incomplete), "incomplete")
	b.ReportMetric(float64(m.base)/(1<<20), "server-base-rss-MiB")
	b.ReportMetric(float64(m.peak)/(1<<20), "server-peak-rss-MiB")
	b.ReportMetric(float64(m.rss)/(1<<20), "server-rss-MiB")
	b.ReportMetric(float64(m.settled)/(1<<20), "server-settled-rss-MiB")
	b.ReportMetric(ms(m.cpu)/float64(b.N), "server-cpu-ms")
	b.ReportMetric(float64(m.written)/(1<<20)/float64(b.N), "server-written-MiB")
	b.ReportMetric(float64(m.client)/(1<<20), "client-rss-MiB")
	b.ReportMetric(ms(m.clientCPU)/float64(b.N), "client-cpu-ms")
	minRes := -1
	for _, s := range streams {
		if s.complete > 0 && (minRes < 0 || s.resources < minRes) {
			minRes = s.resources
		}
	}
	b.Logf("%d streams, %d incomplete; fewest resources in a complete stream's first responses: %d", len(streams), incomplete, minRes)
}

// percentile is the p-th percentile (nearest rank) of ds, 0 for none.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	i := (len(ds)*p + 99) / 100 // nearest rank, 1-based
	return ds[max(i, 1)-1]
}

// logLoad logs the machine's load average: other jobs share its cores.
func logLoad(b *testing.B, when string) {
	l, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		b.Logf("load average %s: %v", when, err)
		return
	}
	b.Logf("load average %s: %s", when, strings.TrimSpace(string(l)))
}
