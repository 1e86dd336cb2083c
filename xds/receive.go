package xds

import "sync"

// receiver applies a stream's requests on the goroutine that reads them,
// while the stream's loop waits for feed changes and the end: handing
// each request to the loop over a channel cost every ACK of a fan-out a
// second goroutine wake-up and select.
// mu serialises the two on the stream's state; once closed, nothing more
// is applied or sent, so the handler can return while a read is pending.
type receiver struct {
	mu     sync.Mutex
	closed bool
	// watching carries the feed's first Changed channel, taken before the
	// first answer, so that no update slips by between the two goroutines.
	watching chan (<-chan struct{})
	// ended carries the error that ends the stream: the read's (io.EOF
	// included) or the request's.
	ended chan error
}

// receive starts reading a stream's requests with recv and applying them
// with apply, called with r.mu held. apply returns the feed's Changed
// channel once, when the first request made the feed known (taken before
// answering it), and nil after.
func receive[R any](recv func() (R, error), apply func(R) (watch <-chan struct{}, err error)) *receiver {
	r := &receiver{watching: make(chan (<-chan struct{}), 1), ended: make(chan error, 1)}
	go func() {
		for {
			req, err := recv()
			if err != nil {
				r.ended <- err
				return
			}
			r.mu.Lock()
			if r.closed {
				r.mu.Unlock()
				return
			}
			watch, err := apply(req)
			if err != nil {
				r.closed = true
			}
			r.mu.Unlock()
			if err != nil {
				r.ended <- err
				return
			}
			if watch != nil {
				r.watching <- watch
			}
		}
	}()
	return r
}

// locked runs f with the stream's state to itself, unless the stream is
// closed.
func (r *receiver) locked(f func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	if err := f(); err != nil {
		r.closed = true
		return err
	}
	return nil
}

// close ends applying requests: after it returns, nothing of the stream
// is touched by the receiving goroutine.
func (r *receiver) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
}
