package harness

import (
	"sync"
	"time"
)

// TrafficLoop calls send every interval until stopped or max has passed,
// and keeps every failure, so a test can prove nothing failed while it
// disturbed the system.
type TrafficLoop struct {
	stopc    chan struct{}
	done     chan struct{}
	stopOnce sync.Once

	mu       sync.Mutex
	sent     int
	failures []string
}

// StartTrafficLoop starts the loop; send is one request, nil when it was
// served as it must be.
func StartTrafficLoop(interval, max time.Duration, send func() error) *TrafficLoop {
	l := &TrafficLoop{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for deadline := time.Now().Add(max); time.Now().Before(deadline); {
			err := send()
			l.mu.Lock()
			l.sent++
			if err != nil {
				l.failures = append(l.failures, time.Now().Format("15:04:05.000")+" "+err.Error())
			}
			l.mu.Unlock()
			select {
			case <-l.stopc:
				return
			case <-time.After(interval):
			}
		}
	}()
	return l
}

// Stop stops the loop (again is harmless) and returns what it sent and
// every failure, each with its time.
func (l *TrafficLoop) Stop() (sent int, failures []string) {
	l.stopOnce.Do(func() { close(l.stopc) })
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sent, l.failures
}
