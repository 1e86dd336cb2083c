package perf

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlsplane/tlsplane/xds"
)

// Environment of the client process.
const (
	envAddr         = "TLSPLANE_PERF_FANOUT_ADDR"
	envDeltaStreams = "TLSPLANE_PERF_FANOUT_DELTA_STREAMS"
	envSotwStreams  = "TLSPLANE_PERF_FANOUT_SOTW_STREAMS"
	envWindows      = "TLSPLANE_PERF_FANOUT_WINDOWS"
	envWorld        = "TLSPLANE_PERF_FANOUT_WORLD"
)

// Envoy's default HTTP/2 receive windows for a gRPC cluster
// (Http2ProtocolOptions: 16 MiB a stream, 24 MiB a connection), which the
// simulated Envoys use unless -fanout.windows=grpc. Fixed windows also turn
// off grpc-go's BDP probing: a PING after each burst of data received,
// which Envoy never sends and the server answers with a write of its own.
const (
	envoyStreamWindow = 16 << 20
	envoyConnWindow   = 24 << 20
)

// fanoutDialOptions are a simulated Envoy's connection's: windows is
// "envoy" (Envoy's windows) or "grpc" (grpc-go's defaults, BDP probing on).
func fanoutDialOptions(windows string) ([]grpc.DialOption, error) {
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(xds.MaxSendMsgSize))}
	switch windows {
	case "envoy":
		return append(opts, grpc.WithInitialWindowSize(envoyStreamWindow), grpc.WithInitialConnWindowSize(envoyConnWindow)), nil
	case "grpc":
		return opts, nil
	}
	return nil, fmt.Errorf("-fanout.windows %q: want envoy or grpc", windows)
}

// TestFanoutClients is the client process of BenchmarkFanout, run only by
// it: it opens the streams (delta and SotW interleaved, each on a
// connection of its own), says "ready <its RSS in bytes>" once each has
// every type, then for each "arm N" line says "armed N" and, when every
// stream has received an update of its world's marker type, "done N <last delta> <median
// delta> <last SotW> <median SotW> <CPU ns>" (UnixNano wall clock, 0 for
// a kind with no streams; the CPU time this process spent from "armed" to
// "done").
func TestFanoutClients(t *testing.T) {
	addr := os.Getenv(envAddr)
	if addr == "" {
		t.Skip("run by BenchmarkFanout")
	}
	var size fanoutSize
	size.delta, _ = strconv.Atoi(os.Getenv(envDeltaStreams))
	size.sotw, _ = strconv.Atoi(os.Getenv(envSotwStreams))
	streams := size.streams()
	world, err := worldNamed(os.Getenv(envWorld))
	if err != nil {
		t.Fatal(err)
	}
	if err := ensureFiles(streams); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var (
		mu       sync.Mutex
		cond     = sync.NewCond(&mu)
		opened   int // streams whose requests went out
		answers  int // responses received, all streams
		synced   int // streams with every type
		armed    = -1
		received = [2]map[int][]int64{{}, {}} // per kind (delta, SotW), per edit, each stream's arrival
		failed   error
	)
	// Progress, every second while it lasts: the benchmark's patience is
	// for a stall, not for the minutes 10,000 streams take. Streams opened
	// and responses received, as well as streams done: the server serves
	// every stream's initial responses at once, so the first stream can
	// finish minutes after the first connection.
	syncing := make(chan struct{})
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var reported string
		for {
			select {
			case <-syncing:
				return
			case <-tick.C:
			}
			mu.Lock()
			line := fmt.Sprintf("syncing opened=%d responses=%d synced=%d", opened, answers, synced)
			mu.Unlock()
			if line != reported {
				reported = line
				fmt.Println(line)
			}
		}
	}()
	dialOpts, err := fanoutDialOptions(os.Getenv(envWindows))
	if err != nil {
		t.Fatal(err)
	}
	for i := range streams {
		// Interleaved, so that both kinds are in sync at once.
		delta := (i+1)*size.delta/streams > i*size.delta/streams
		kind := 1
		if delta {
			kind = 0
		}
		conn, err := grpc.NewClient(addr, dialOpts...)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		node := &corev3.Node{Id: fmt.Sprintf("envoy-%d", i), Cluster: world.fleet(i)}
		c, err := dialADS(ctx, conn, delta, node, world.types)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		opened++
		mu.Unlock()
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
				answers++
				// The waiter is woken once per phase, not per response:
				// 10,000 wake-ups would be the client's, on the server's
				// cores.
				if !seen[s.typeURL] {
					seen[s.typeURL] = true
					if len(seen) == len(world.types) {
						synced++
						if synced == streams {
							cond.Broadcast()
						}
					}
				} else if s.typeURL == world.marker && armed > counted {
					counted = armed
					received[kind][armed] = append(received[kind][armed], time.Now().UnixNano())
					if len(received[0][armed]) == size.delta && len(received[1][armed]) == size.sotw {
						cond.Broadcast()
					}
				}
				mu.Unlock()
			}
		}()
	}
	mu.Lock()
	for synced < streams && failed == nil {
		cond.Wait()
	}
	mu.Unlock()
	close(syncing)
	if failed != nil {
		t.Fatal(failed)
	}
	rss, _ := vmRSS()
	fmt.Println("ready", rss)

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
		cpu0 := cpuTime()
		mu.Lock()
		for len(received[0][n]) < size.delta || len(received[1][n]) < size.sotw {
			if failed != nil {
				break
			}
			cond.Wait()
		}
		times := [2][]int64{slices.Clone(received[0][n]), slices.Clone(received[1][n])}
		mu.Unlock()
		cpu := cpuTime() - cpu0
		if failed != nil {
			t.Fatal(failed)
		}
		line := []string{"done", strconv.Itoa(n)}
		for _, ts := range times {
			var last, p50 int64
			if len(ts) > 0 {
				slices.Sort(ts)
				last, p50 = ts[len(ts)-1], ts[len(ts)/2]
			}
			line = append(line, strconv.FormatInt(last, 10), strconv.FormatInt(p50, 10))
		}
		line = append(line, strconv.FormatInt(cpu.Nanoseconds(), 10))
		fmt.Println(strings.Join(line, " "))
	}
	if err := in.Err(); err != nil && err != io.EOF {
		t.Fatal(err)
	}
}
