package echoclient

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// sender makes request id of a run and returns its output lines.
type sender interface {
	send(ctx context.Context, id int) (string, error)
	close()
}

// forward makes r.count requests, at most maxConcurrency at once and at
// r.qps when set, all within r.timeout (the original's timeout is for
// the whole run, as well as for each request); the outputs come back in
// request order. One failed request fails the run, as in the original.
func forward(ctx context.Context, r *request) ([]string, error) {
	var active atomic.Int64
	var s sender
	var err error
	switch r.scheme {
	case "grpc":
		s, err = newGRPCSender(r, &active)
	default:
		s, err = newHTTPSender(r, &active)
	}
	if err != nil {
		return nil, err
	}
	defer s.close()

	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	outputs := make([]string, r.count)
	errs := make([]error, r.count)
	done := make([]bool, r.count)
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxConcurrency)
	var throttle <-chan time.Time
	if r.qps > 0 {
		ticker := time.NewTicker(time.Second / time.Duration(r.qps))
		defer ticker.Stop()
		throttle = ticker.C
	}
	for id := range r.count {
		if throttle != nil {
			select {
			case <-ctx.Done():
			case <-throttle:
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			active.Add(1)
			defer active.Add(-1)
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				mu.Lock()
				errs[id] = fmt.Errorf("request set timed out: %v", ctx.Err())
				mu.Unlock()
				return
			}
			defer func() { <-slots }()
			out, err := s.send(ctx, id)
			mu.Lock()
			outputs[id], errs[id], done[id] = out, err, err == nil
			mu.Unlock()
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-ctx.Done():
		mu.Lock()
		defer mu.Unlock()
		completed := 0
		for _, d := range done {
			if d {
				completed++
			}
		}
		return nil, fmt.Errorf("request set timed out after %v and only %d/%d requests completed", r.timeout, completed, r.count)
	}
	failed, first := 0, error(nil)
	for _, err := range errs {
		if err != nil {
			if first == nil {
				first = err
			}
			failed++
		}
	}
	if failed > 0 {
		return nil, fmt.Errorf("%d/%d requests had errors; first error: %v", failed, r.count, first)
	}
	return outputs, nil
}

// The original's output lines: "[id] Field=value", "[id body] line".
func writeField(out *bytes.Buffer, id int, field, value string) {
	fmt.Fprintf(out, "[%d] %s=%s\n", id, field, value)
}

func writeBodyLine(out *bytes.Buffer, id int, line string) {
	fmt.Fprintf(out, "[%d body] %s\n", id, line)
}
