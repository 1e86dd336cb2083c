package faults

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// partialClientHello is a TLS record header announcing a 512-byte
// handshake record and the first bytes of a ClientHello: a server that
// reads it waits for the rest, holding a file descriptor and a buffer.
var partialClientHello = []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03}

// flood is clients that never authenticate: each worker holds one
// connection from its loopback source address, sending a partial
// ClientHello (or, for idle workers, nothing), and dials again once the
// server closes it. Bounded in workers, dials per second and total dials.
type flood struct {
	target  string
	sources []string // 127.0.0.x addresses, one per worker in turn
	workers int
	// idleEvery: every idleEvery-th worker sends nothing at all.
	idleEvery int
	// dialsPerSecond and maxDials bound the load on a shared machine.
	dialsPerSecond int
	maxDials       int64

	dials, failed, closedByServer atomic.Int64
	open, peakOpen                atomic.Int64

	cancel, stopDialing context.CancelFunc
	wg                  sync.WaitGroup
}

// start runs the workers until stop (or ctx) ends them.
func (f *flood) start(ctx context.Context) {
	ctx, f.cancel = context.WithCancel(ctx)
	var dialing context.Context
	dialing, f.stopDialing = context.WithCancel(ctx)
	tokens := make(chan struct{})
	f.wg.Add(1)
	go func() { // the pace of dials, shared by every worker
		defer f.wg.Done()
		tick := time.NewTicker(time.Second / time.Duration(f.dialsPerSecond))
		defer tick.Stop()
		for {
			select {
			case <-dialing.Done():
				return
			case <-tick.C:
				select {
				case tokens <- struct{}{}:
				case <-dialing.Done():
					return
				}
			}
		}
	}()
	for i := range f.workers {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.work(ctx, dialing, tokens, f.sources[i%len(f.sources)], f.idleEvery > 0 && i%f.idleEvery == 0)
		}()
	}
}

// work dials (paced by tokens) until dialing ends, holding each
// connection until the server closes it or ctx ends.
func (f *flood) work(ctx, dialing context.Context, tokens <-chan struct{}, source string, idle bool) {
	dialer := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}}
	buf := make([]byte, 64)
	for {
		select {
		case <-dialing.Done():
			return
		case <-tokens:
		}
		if f.dials.Add(1) > f.maxDials {
			return
		}
		conn, err := dialer.DialContext(ctx, "tcp", f.target)
		if err != nil {
			f.failed.Add(1)
			continue
		}
		if n := f.open.Add(1); n > f.peakOpen.Load() {
			f.peakOpen.Store(n) // approximate: a peak for the report
		}
		if !idle {
			_, _ = conn.Write(partialClientHello)
		}
		done := make(chan struct{})
		go func() {
			select {
			case <-ctx.Done():
				conn.Close()
			case <-done:
			}
		}()
		// Blocks until the server closes the connection (or stop does).
		for {
			if _, err := conn.Read(buf); err != nil {
				break
			}
		}
		close(done)
		conn.Close()
		f.open.Add(-1)
		if ctx.Err() == nil {
			f.closedByServer.Add(1)
		}
	}
}

// hold stops new dials: the connections open stay open until the server
// closes them (or stop).
func (f *flood) hold() { f.stopDialing() }

// stop closes every flood connection and waits for the workers.
func (f *flood) stop() {
	f.cancel()
	f.wg.Wait()
}
