package xds

import "context"

// receive reads a stream's requests on a goroutine of its own, so the
// stream's loop can wait for a request, a feed change and the end at once.
// The goroutine ends with the stream (ctx is the stream's context).
func receive[R any](ctx context.Context, recv func() (R, error)) (<-chan R, <-chan error) {
	reqs := make(chan R)
	recvErr := make(chan error, 1)
	go func() {
		for {
			req, err := recv()
			if err != nil {
				recvErr <- err
				return
			}
			select {
			case reqs <- req:
			case <-ctx.Done():
				return
			}
		}
	}()
	return reqs, recvErr
}
