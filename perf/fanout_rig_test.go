package perf

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/xds"
)

// fanoutRig is one server with its streams synchronised, kept from the
// benchmark's first run (b.N = 1) to its measured one: at 10,000 streams
// the initial sync is minutes, and the peak it leaves is the one to report.
type fanoutRig struct {
	world    fanoutWorld
	size     fanoutSize
	clusters int
	tr       *translator.Translator
	pub      *snapshots.Publisher
	in       translator.Inputs
	out      translator.Output
	rv       int // the last CA revision published
	edits    int // CA rotations published

	srv     *xds.Server
	cancel  context.CancelFunc
	child   *exec.Cmd
	toChild io.WriteCloser
	lines   *bufio.Scanner

	baseRSS     int64 // server, settled, before any stream
	initialSync time.Duration
	syncCPU     time.Duration // server's
	syncBytes   int64         // server's writes
	clientRSS   int64         // once synchronised
}

// newFanoutRig starts a server serving world's inputs of clusters
// Services on loopback and a client process holding size's streams
// against it, and waits until every stream has every type. Close undoes
// it, also after a failure.
func newFanoutRig(b *testing.B, world fanoutWorld, size fanoutSize, clusters int) *fanoutRig {
	// One accepted connection per stream here, one dialled in the child.
	if err := ensureFiles(size.streams()); err != nil {
		b.Fatal(err)
	}
	r := &fanoutRig{world: world, size: size, clusters: clusters, rv: 1, tr: translator.New(), pub: snapshots.New(snapshots.Options{})}
	r.in = world.inputs(clusters)
	r.out = r.tr.Translate(r.in, nil, benchNow, translator.Options{})
	if _, err := r.pub.Publish(r.out); err != nil {
		b.Fatal(err)
	}
	r.srv = xds.NewServer(r.pub, xds.Options{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go r.srv.Serve(lis)
	r.baseRSS = settledRSS()
	if err := resetPeakRSS(); err != nil {
		b.Logf("server-peak-rss-MiB counts from the process's start: %v", err)
	}

	var ctx context.Context
	ctx, r.cancel = context.WithCancel(context.Background())
	r.child = exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFanoutClients$", "-test.bench=^$", "-test.timeout=0")
	r.child.Env = append(os.Environ(), envAddr+"="+lis.Addr().String(), envWorld+"="+world.name,
		envDeltaStreams+"="+strconv.Itoa(size.delta), envSotwStreams+"="+strconv.Itoa(size.sotw), envWindows+"="+*fanoutWindows)
	r.child.Stderr = os.Stderr
	if r.toChild, err = r.child.StdinPipe(); err != nil {
		b.Fatal(err)
	}
	fromChild, err := r.child.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	r.lines = bufio.NewScanner(fromChild)
	cpu0 := cpuTime()
	written0, _ := writtenBytes()
	start := time.Now()
	if err := r.child.Start(); err != nil {
		b.Fatal(err)
	}
	ready := r.expect(b, "ready")
	r.initialSync = time.Since(start)
	r.syncCPU = cpuTime() - cpu0
	if w, err := writtenBytes(); err == nil {
		r.syncBytes = w - written0
	}
	r.clientRSS, _ = strconv.ParseInt(ready[1], 10, 64)
	return r
}

// Close ends the client process and the server.
func (r *fanoutRig) Close() {
	if r.child != nil && r.child.Process != nil {
		r.toChild.Close()
		r.cancel() // a client still waiting would keep Wait waiting
		r.child.Wait()
	}
	if r.cancel != nil {
		r.cancel()
	}
	if r.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r.srv.Stop(ctx)
	}
}

// nextEdit computes the world's next edit, not yet published, as the
// pipeline does: an Update with the one changed object.
func (r *fanoutRig) nextEdit(b *testing.B) {
	r.rv++
	var change translator.Change
	r.in, change = r.world.edit(r.in, r.clusters, r.edits, r.rv)
	out, ok := r.tr.Update([]translator.Change{change}, translator.PreviousStatus(r.out.Statuses), benchNow, translator.Options{})
	if !ok {
		b.Fatalf("Update refused %s %s", change.Kind, change.Key)
	}
	r.out = out
	r.edits++
}

// arm tells the client process that the next marker update of each stream
// is the last edit's (numbered over the rig's life: the client process
// counts arrivals per number).
func (r *fanoutRig) arm(b *testing.B) {
	fmt.Fprintf(r.toChild, "arm %d\n", r.edits)
	r.expect(b, "armed")
}

// arrivals is what the client process saw of one edit.
type arrivals struct {
	last, p50 [2]time.Time // per kind (delta, SotW); zero for a kind with no streams
	clientCPU time.Duration
}

// await waits until every stream has the last edit.
func (r *fanoutRig) await(b *testing.B) arrivals {
	f := r.expect(b, "done")
	if len(f) != 7 {
		b.Fatalf("client process: %q", strings.Join(f, " "))
	}
	var a arrivals
	for k := range 2 {
		last, _ := strconv.ParseInt(f[2+2*k], 10, 64)
		p50, _ := strconv.ParseInt(f[3+2*k], 10, 64)
		if last != 0 {
			a.last[k], a.p50[k] = time.Unix(0, last), time.Unix(0, p50)
		}
	}
	cpu, _ := strconv.ParseInt(f[6], 10, 64)
	a.clientCPU = time.Duration(cpu)
	return a
}

// expect reads the client process's output up to a line starting with
// prefix. Each line it prints is progress: it fails after -fanout.patience
// without one (the initial sync of 10,000 streams is minutes, and reports
// itself as it goes).
func (r *fanoutRig) expect(b *testing.B, prefix string) []string {
	b.Helper()
	lines := make(chan []string)
	go func() {
		defer close(lines)
		for r.lines.Scan() {
			f := strings.Fields(r.lines.Text())
			lines <- f
			if len(f) > 0 && f[0] == prefix {
				return
			}
		}
	}()
	for {
		select {
		case f, ok := <-lines:
			if !ok {
				b.Fatalf("client process ended before %q: %v", prefix, r.lines.Err())
			}
			if len(f) > 0 && f[0] == prefix {
				return f
			}
		case <-time.After(*fanoutPatience):
			b.Fatalf("nothing from the client process for %v, waiting for %q", *fanoutPatience, prefix)
		}
	}
}
