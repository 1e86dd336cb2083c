package xds

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// syncBuffer is a log sink the flush timer's goroutine may write to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Split(strings.TrimSpace(b.buf.String()), "\n")
}

// A flood's refusals are logged at once, then at most once per interval
// with the counts since, the last ones included; all are counted.
func TestRefusalsAreLoggedAtMostOncePerInterval(t *testing.T) {
	var out syncBuffer
	r := newRefusals(slog.New(slog.NewTextHandler(&out, nil)), prometheus.NewRegistry(), newAdmission(ConnectionLimits{Handshakes: 7}))
	r.interval = 200 * time.Millisecond
	r.note(RefusedHandshakeEvicted, nil)
	for range 500 {
		r.note(RefusedHandshakeEvicted, nil)
	}
	r.note(RefusedHandshakeTimeout, nil)
	if got := out.lines(); len(got) != 1 || !strings.Contains(got[0], "refused=map[handshake_evicted:1]") || !strings.Contains(got[0], "maxHandshakes=7") {
		t.Fatalf("log before the interval passed: %q, want one line of the first refusal", got)
	}
	time.Sleep(3 * r.interval)
	got := out.lines()
	if len(got) != 2 || !strings.Contains(got[1], "handshake_evicted:500 handshake_timeout:1") {
		t.Fatalf("log after the interval: %q, want a second line with the refusals since the first", got)
	}
	if n := counterValue(t, r.counter.WithLabelValues(RefusedHandshakeEvicted)); n != 501 {
		t.Errorf("handshake_evicted counted %v, want 501", n)
	}
}
