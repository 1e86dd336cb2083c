package perf

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlsplane/tlsplane/dirsource"
	"github.com/tlsplane/tlsplane/e2e/harness"
	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/pipeline"
	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/xds"
)

var (
	resyncEdits    = flag.Bool("perf.resyncedits", false, "run TestEditsDuringResync (in process: no binaries needed)")
	resyncServices = flag.String("perf.resyncedits.services", "10000,100000", "comma-separated Service counts of TestEditsDuringResync")
	resyncEvery    = flag.String("perf.resyncedits.resync", "1ms,1m", "comma-separated directory resync periods: 1ms runs the walks back to back, 1m is the product's (the control: an edit almost never meets a walk)")
	resyncCount    = flag.Int("perf.resyncedits.edits", 200, "edits per run, in turn a CA rotation and an EndpointSlice change")
)

// TestEditsDuringResync: issue 37's end-to-end figure for an edit landing
// while the directory's periodic walk runs. tlsplane's directory source,
// pipeline, snapshots and xDS server run in this process, wired as serve
// wires them with its defaults, over n Services (TestPropagation's world:
// each file a Service, its CA ConfigMap, its BackendTLSPolicy and its
// EndpointSlice) and with the resync period given, so that with 1ms walks
// run back to back; one delta ADS stream on loopback subscribes to
// everything. An edit is an atomic rename of one file; its latency runs
// from the rename to the arrival of the response carrying the changed
// resource (the edit's last: each edit changes one resource), so it bounds
// "rename → last response sent" from above by a loopback hop.
func TestEditsDuringResync(t *testing.T) {
	if !*resyncEdits {
		t.Skip("a measurement: run with -perf.resyncedits")
	}
	for _, ns := range strings.Split(*resyncServices, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(ns))
		if err != nil || n <= 0 {
			t.Fatalf("-perf.resyncedits.services: %q", ns)
		}
		for _, rs := range strings.Split(*resyncEvery, ",") {
			every, err := time.ParseDuration(strings.TrimSpace(rs))
			if err != nil {
				t.Fatalf("-perf.resyncedits.resync: %q", rs)
			}
			t.Run(fmt.Sprintf("services=%d/resync=%v", n, every), func(t *testing.T) {
				lat, initial := measureResyncEdits(t, n, every)
				slices.Sort(lat)
				t.Logf("services=%d resync=%v edits=%d rename->last response: p50=%.2fms p99=%.2fms max=%.2fms (initial sync %.1fs, load %s)",
					n, every, len(lat), percentile(lat, 50), percentile(lat, 99), percentile(lat, 100), initial.Seconds(), loadAverage())
			})
		}
	}
}

func measureResyncEdits(t *testing.T, n int, every time.Duration) ([]float64, time.Duration) {
	dir := t.TempDir()
	cas := [2]string{string(harness.NewAuthority(t, "perf-ca-one").PEM), string(harness.NewAuthority(t, "perf-ca-two").PEM)}
	caOf, epGen := make([]int, n), make([]int, n)
	for i := range n {
		writeService(t, dir, i, cas[0], 0, 0)
	}
	// Older than the source's racy window, as a directory long in place.
	old := time.Now().Add(-time.Hour)
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("svc-%d.yaml", i))
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var limits manifests.Limits // the defaults
	src, err := dirsource.New(dirsource.Options{Dir: dir, Limits: limits, Parse: limits.Parser(func(string) {}), Resync: every})
	if err != nil {
		t.Fatal(err)
	}
	pub := snapshots.New(snapshots.Options{})
	pl, err := pipeline.New(pipeline.Options{Source: src, Publisher: pub, Sink: pipeline.NewStatusStore(slog.New(slog.DiscardHandler), "tlsplane.io/gateway-controller")})
	if err != nil {
		t.Fatal(err)
	}
	plDone := make(chan error, 1)
	go func() { plDone <- pl.Run(ctx) }()
	defer func() { cancel(); <-plDone }()
	srv := xds.NewServer(pub, xds.Options{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	defer func() {
		stop, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		srv.Stop(stop)
	}()

	start := time.Now()
	// CA secrets by name, as Envoy asks for them: all 100,000 in one
	// response are 84 MB, over xds.MaxSendMsgSize (64 MiB).
	var secrets []string
	for e := range *resyncCount {
		secrets = append(secrets, caSecretName(editedService(e, n)))
	}
	slices.Sort(secrets)
	secrets = slices.Compact(secrets)
	arrivals, err := deltaStream(ctx, lis.Addr().String(), secrets)
	if err != nil {
		t.Fatal(err)
	}
	// The first sync: every cluster, load assignment and CA secret.
	types := map[string]map[string]bool{}
	deadline := time.After(10 * time.Minute)
	for synced := false; !synced; {
		select {
		case a, ok := <-arrivals:
			if !ok {
				t.Fatal("stream ended during the first sync")
			}
			if types[a.typeURL] == nil {
				types[a.typeURL] = map[string]bool{}
			}
			for _, name := range a.names {
				types[a.typeURL][name] = true
			}
			synced = len(types) == 3
			for typeURL, names := range types {
				synced = synced && (len(names) >= n || typeURL == secretType && len(names) == len(secrets))
			}
		case <-deadline:
			t.Fatalf("no first sync within 10m: %d types", len(types))
		}
	}
	initial := time.Since(start)

	var lat []float64
	for e := range *resyncCount {
		i := editedService(e, n)
		want := fmt.Sprintf("%s/svc-%d/443", namespaceOf(i), i)
		if e%2 == 0 {
			caOf[i] = 1 - caOf[i]
			want = caSecretName(i)
		} else {
			epGen[i]++
		}
		// An idle world (-perf.idle, past the pipeline's quiet period), each
		// edit at another point of the walk's cycle; drain what came meanwhile.
		time.Sleep(*idle + time.Duration(e*7%31)*time.Millisecond)
		for drained := false; !drained; {
			select {
			case <-arrivals:
			default:
				drained = true
			}
		}
		written := writeService(t, dir, i, cas[caOf[i]], 0, epGen[i])
		var got time.Time
		timeout := time.After(10 * time.Second)
		for got.IsZero() {
			select {
			case a, ok := <-arrivals:
				if !ok {
					t.Fatal("stream ended")
				}
				if slices.Contains(a.names, want) {
					got = a.at
				}
			case <-timeout:
				t.Fatalf("edit %d (%s) not sent within 10s", e, want)
			}
		}
		lat = append(lat, float64(got.Sub(written).Microseconds())/1000)
	}
	return lat, initial
}

// arrival is one response of the stream: when it came, its type and the
// names of the resources it carries.
type arrival struct {
	at      time.Time
	typeURL string
	names   []string
}

const secretType = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"

// deltaStream opens one delta ADS stream subscribed to every cluster and
// load assignment, wildcard, and to the secrets named, as fleet "perf";
// it ACKs every response and hands each on.
func deltaStream(ctx context.Context, addr string, secrets []string) (<-chan arrival, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		return nil, err
	}
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		conn.Close()
		return nil, err
	}
	node := &corev3.Node{Id: "perf-client", Cluster: plainFleet}
	for _, req := range []*discoveryv3.DeltaDiscoveryRequest{
		{TypeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster"},
		{TypeUrl: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"},
		{TypeUrl: secretType, ResourceNamesSubscribe: secrets},
	} {
		req.Node = node
		if err := stream.Send(req); err != nil {
			conn.Close()
			return nil, err
		}
		node = nil
	}
	out := make(chan arrival, 1024)
	go func() {
		defer conn.Close()
		defer close(out)
		for {
			resp, err := stream.Recv()
			if err != nil {
				if !errors.Is(ctx.Err(), context.Canceled) {
					fmt.Fprintln(os.Stderr, "delta stream:", err)
				}
				return
			}
			a := arrival{at: time.Now(), typeURL: resp.GetTypeUrl()}
			for _, r := range resp.GetResources() {
				a.names = append(a.names, r.GetName())
			}
			if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.GetTypeUrl(), ResponseNonce: resp.GetNonce()}); err != nil {
				return
			}
			select {
			case out <- a:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
