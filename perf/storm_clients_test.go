package perf

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlsplane/tlsplane/xds"
)

// Environment of the storm's client process, besides envAddr.
const (
	envStormStreams  = "TLSPLANE_PERF_STORM_STREAMS"
	envStormDeadline = "TLSPLANE_PERF_STORM_DEADLINE"
)

// stormStream is what one stream of the storm saw, from its own dial.
type stormStream struct {
	delta           bool
	first, complete time.Duration // 0: never
	resources       int           // in the first response of each type, summed
	err             error
}

// TestStormClients is the client process of BenchmarkReconnectStorm, run
// only by it: it starts every stream at once (delta and SotW interleaved,
// each on a connection of its own, all goroutines released by one
// barrier), and when every stream has every type, or the deadline passed,
// prints one line per stream, "stream <i> <delta|sotw> <first-ns>
// <complete-ns> <resources> <error or ->" (durations from that stream's
// dial, 0 for never), then "storm <its RSS in bytes> <its CPU time in ns>". It then holds the
// streams until its standard input closes, so the server's memory after
// the storm is measured with them.
func TestStormClients(t *testing.T) {
	addr := os.Getenv(envAddr)
	n, _ := strconv.Atoi(os.Getenv(envStormStreams))
	if addr == "" || n == 0 {
		t.Skip("run by BenchmarkReconnectStorm")
	}
	deadline, err := time.ParseDuration(os.Getenv(envStormDeadline))
	if err != nil {
		t.Fatal(err)
	}
	if err := ensureFiles(n); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	streams := make([]stormStream, n)
	var mu sync.Mutex     // streams' fields: a stream still syncing at the deadline keeps writing them
	var wg sync.WaitGroup // every stream complete or failed
	release := make(chan struct{})
	for i := range streams {
		streams[i].delta = i%2 == 0
		wg.Add(1)
		go func() {
			s := &streams[i]
			done := sync.OnceFunc(wg.Done)
			defer done()
			fail := func(err error) {
				mu.Lock()
				if s.complete == 0 && ctx.Err() == nil {
					s.err = err
				}
				mu.Unlock()
			}
			<-release
			start := time.Now()
			conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(xds.MaxSendMsgSize)))
			if err != nil {
				fail(err)
				return
			}
			defer conn.Close()
			c, err := dialADS(ctx, conn, s.delta, &corev3.Node{Id: fmt.Sprintf("envoy-%d", i), Cluster: "edge"}, servedTypes)
			if err != nil {
				fail(err)
				return
			}
			seen := map[string]bool{}
			for {
				r, err := c.recv()
				if err != nil {
					fail(err)
					return
				}
				now := time.Since(start)
				mu.Lock()
				if s.first == 0 {
					s.first = now
				}
				if !seen[r.typeURL] {
					seen[r.typeURL] = true
					s.resources += r.resources
					if len(seen) == len(servedTypes) {
						s.complete = now
						done()
					}
				}
				mu.Unlock()
			}
		}()
	}
	close(release)
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	select {
	case <-all:
	case <-time.After(deadline):
	}
	mu.Lock()
	report := slices.Clone(streams)
	mu.Unlock()
	for i, s := range report {
		kind := "sotw"
		if s.delta {
			kind = "delta"
		}
		e := "-"
		if s.err != nil {
			e = strconv.Quote(s.err.Error())
		}
		fmt.Println("stream", i, kind, s.first.Nanoseconds(), s.complete.Nanoseconds(), s.resources, e)
	}
	rss, _ := vmRSS()
	fmt.Println("storm", rss, cpuTime().Nanoseconds())
	// Hold the streams until the benchmark has measured the server.
	var buf [1]byte
	for {
		if _, err := os.Stdin.Read(buf[:]); err != nil {
			return
		}
	}
}
