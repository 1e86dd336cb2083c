package perf

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/xds"
)

var (
	fanoutStreams  = flag.Int("fanout.streams", 100, "simulated Envoys (one connection and ADS stream each)")
	fanoutClusters = flag.Int("fanout.clusters", 1000, "policy-targeted Services, so clusters, load assignments and secrets each")
	fanoutPatience = flag.Duration("fanout.patience", 5*time.Minute, "bound on the initial sync and on each update")
)

// Environment of the client process.
const (
	envAddr    = "TLSPLANE_PERF_FANOUT_ADDR"
	envStreams = "TLSPLANE_PERF_FANOUT_STREAMS"
	envDelta   = "TLSPLANE_PERF_FANOUT_DELTA"
)

// BenchmarkFanout: -fanout.streams simulated Envoys (raw ADS streams over
// real gRPC on loopback, in a separate process so the server's memory is
// measured alone) subscribe to -fanout.clusters clusters with their load
// assignments and secrets. An operation is one CA rotation published:
// ns/op runs from Publish to the last stream receiving the new secret;
// publish-ns/op is Publish alone, p50-ns the median stream. server-rss-MiB
// is the server process's resident memory after the run, server-heap-MiB
// its live heap then.
func BenchmarkFanout(b *testing.B) {
	for _, mode := range []string{"delta", "sotw"} {
		b.Run(fmt.Sprintf("%s/streams=%d/clusters=%d", mode, *fanoutStreams, *fanoutClusters), func(b *testing.B) {
			benchmarkFanout(b, mode == "delta", *fanoutStreams, *fanoutClusters)
		})
	}
}

func benchmarkFanout(b *testing.B, delta bool, streams, clusters int) {
	in := Inputs(clusters)
	tr := translator.New()
	pub := snapshots.New(snapshots.Options{})
	out := tr.Translate(in, nil, benchNow, translator.Options{})
	if _, err := pub.Publish(out); err != nil {
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

	ctx, cancel := context.WithTimeout(context.Background(), 4**fanoutPatience)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFanoutClients$", "-test.bench=^$", "-test.timeout=0")
	cmd.Env = append(os.Environ(), envAddr+"="+lis.Addr().String(), envStreams+"="+strconv.Itoa(streams), envDelta+"="+strconv.FormatBool(delta))
	cmd.Stderr = os.Stderr
	toChild, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	fromChild, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		toChild.Close()
		cancel() // a client still waiting would keep Wait waiting
		cmd.Wait()
	}()
	lines := bufio.NewScanner(fromChild)
	expect := func(prefix string) []string {
		b.Helper()
		got := make(chan []string, 1)
		go func() {
			for lines.Scan() {
				if f := strings.Fields(lines.Text()); len(f) > 0 && f[0] == prefix {
					got <- f
					return
				}
			}
			got <- nil
		}()
		select {
		case f := <-got:
			if f == nil {
				b.Fatalf("client process ended before %q: %v", prefix, lines.Err())
			}
			return f
		case <-time.After(*fanoutPatience):
			b.Fatalf("no %q from the client process within %v", prefix, *fanoutPatience)
			return nil
		}
	}
	syncStart := time.Now()
	expect("ready")
	initialSync := time.Since(syncStart)

	var publishing, fanning time.Duration
	var p50s []float64
	rv := 1
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rv++
		in = RotateCA(in, (i*7919)%clusters, rv)
		out = tr.Translate(in, translator.PreviousStatus(out.Statuses), benchNow, translator.Options{})
		fmt.Fprintf(toChild, "arm %d\n", i)
		expect("armed")
		start := time.Now()
		if changed, err := pub.Publish(out); err != nil || !changed {
			b.Fatalf("Publish: changed=%v, %v", changed, err)
		}
		publishing += time.Since(start)
		f := expect("done")
		last, _ := strconv.ParseInt(f[1], 10, 64)
		p50, _ := strconv.ParseInt(f[2], 10, 64)
		// Wall clocks of the two processes: the same machine's.
		fanning += time.Unix(0, last).Sub(start)
		p50s = append(p50s, float64(time.Unix(0, p50).Sub(start).Nanoseconds()))
	}
	b.StopTimer()
	rss, _ := vmRSS()
	// The live heap, apart from what the runtime keeps of the initial
	// sync's peak: RSS is the target, this says how much of it is garbage.
	// Two collections: the first only moves pooled buffers to the victim
	// cache.
	runtime.GC()
	runtime.GC()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	b.ReportMetric(float64(mem.HeapInuse)/(1<<20), "server-heap-MiB")
	b.ReportMetric(float64(fanning.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(float64(publishing.Nanoseconds())/float64(b.N), "publish-ns/op")
	slices.Sort(p50s)
	b.ReportMetric(p50s[len(p50s)/2], "p50-ns")
	b.ReportMetric(float64(rss)/(1<<20), "server-rss-MiB")
	b.ReportMetric(ms(initialSync), "initial-sync-ms")
}

// TestFanoutClients is the client process of BenchmarkFanout, run only by
// it: it opens the streams, says "ready" once each has every type, then
// for each "arm N" line says "armed N" and, when every stream has received
// a secret update, "done N <last> <median>" (UnixNano wall clock).
func TestFanoutClients(t *testing.T) {
	addr := os.Getenv(envAddr)
	if addr == "" {
		t.Skip("run by BenchmarkFanout")
	}
	streams, _ := strconv.Atoi(os.Getenv(envStreams))
	delta, _ := strconv.ParseBool(os.Getenv(envDelta))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var (
		mu       sync.Mutex
		cond     = sync.NewCond(&mu)
		synced   int
		armed    = -1
		received = map[int][]int64{} // per edit, each stream's arrival
		failed   error
	)
	for i := range streams {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(xds.MaxSendMsgSize)))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		node := &corev3.Node{Id: fmt.Sprintf("envoy-%d", i), Cluster: "edge"}
		c, err := dialADS(ctx, conn, delta, node)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			seen := map[string]bool{}
			counted := -1 // the last edit this stream's arrival was counted for
			for {
				s, err := c.recv()
				mu.Lock()
				if err != nil {
					if failed == nil && ctx.Err() == nil {
						failed = err
					}
					cond.Broadcast()
					mu.Unlock()
					return
				}
				if !seen[s.typeURL] {
					seen[s.typeURL] = true
					if len(seen) == len(servedTypes) {
						synced++
					}
				} else if s.typeURL == resource.SecretType && armed > counted {
					counted = armed
					received[armed] = append(received[armed], time.Now().UnixNano())
				}
				cond.Broadcast()
				mu.Unlock()
			}
		}()
	}
	mu.Lock()
	for synced < streams && failed == nil {
		cond.Wait()
	}
	mu.Unlock()
	if failed != nil {
		t.Fatal(failed)
	}
	fmt.Println("ready")

	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) != 2 || f[0] != "arm" {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		mu.Lock()
		armed = n
		mu.Unlock()
		fmt.Println("armed", n)
		mu.Lock()
		for len(received[n]) < streams && failed == nil {
			cond.Wait()
		}
		times := slices.Clone(received[n])
		mu.Unlock()
		if failed != nil {
			t.Fatal(failed)
		}
		slices.Sort(times)
		fmt.Println("done", times[len(times)-1], times[len(times)/2])
	}
	if err := in.Err(); err != nil && err != io.EOF {
		t.Fatal(err)
	}
}
