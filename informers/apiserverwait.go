package informers

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// WaitForAPIServer wraps the API server transport (rest.Config.Wrap) so a
// request that cannot reach the API server is sent again every interval
// until it does or its context ends, instead of failing at once.
//
// Why: client-go's reflector answers a failed list or watch with a backoff
// (800 ms doubling to 30 s, jitter 1.0, reset only after 2 minutes without
// an error) that shared informers do not let us configure; through a 30 s
// outage it grows so far that the first retry after the API server is back
// came up to tens of seconds late. Held here, the reflector never sees the
// outage as a string of errors, and its request goes out within interval
// of the API server listening again.
//
// A request whose context has a deadline fails at once, as before: its
// caller chose a time box and retries inside it. Leader election's renewal
// and release are such requests; held, the release (its own deadline, after
// the renewal failed) would stretch a lost term past the renew deadline,
// the margin that keeps an old leader from writing once the Lease expires.
// Status writes carry the term's context: held, they end with the term.
//
// Only a request the API server cannot have acted on is repeated: one whose
// connection was never made (a failed dial: nothing was sent), or a GET,
// HEAD or OPTIONS request whose connection broke before any answer. A
// request with a body is repeated only when it can be rebuilt
// (Request.GetBody).
//
// A restarted API server listens before it is ready: for a second or two
// its authenticator's and authorizer's caches are still empty and it
// answers 401 or 403 to requests it will soon allow (measured: every watch
// and the Lease read forbidden ~1.5 s before /readyz said ok). Each such
// answer would cost a reflector a backoff step, the leader election a
// retry period. For startupWindow after an outage, those answers are not
// returned but waited out the same way: a rejected request had no effect,
// so sending it again is safe; one truly refused is returned when the
// window ends.
// Any other answer is returned as is (client-go itself honours Retry-After).
func WaitForAPIServer(log *slog.Logger, interval time.Duration) func(http.RoundTripper) http.RoundTripper {
	// One state for every client built from the config, so an outage is
	// logged once and the startup window is the API server's, not a client's.
	s := &apiServerState{interval: interval, log: log}
	return func(next http.RoundTripper) http.RoundTripper {
		return &apiServerWait{next: next, state: s}
	}
}

const (
	// stillDownEvery is how often a wait that goes on is logged again.
	stillDownEvery = time.Minute
	// startupWindow is how long after an outage 401 and 403 are taken for
	// a starting API server's empty caches.
	startupWindow = 10 * time.Second
)

type apiServerWait struct {
	next  http.RoundTripper
	state *apiServerState
}

func (w *apiServerWait) RoundTrip(req *http.Request) (*http.Response, error) {
	for {
		resp, err := w.next.RoundTrip(req)
		_, boxed := req.Context().Deadline()
		if err != nil {
			if boxed || !notAnswered(req, err) {
				return nil, err
			}
		} else {
			w.state.answered()
			if boxed || !rejectedWhileStarting(resp) || !w.state.starting(resp.StatusCode) {
				return resp, nil
			}
		}
		again, ok := rewound(req)
		if !ok {
			return resp, err
		}
		if err != nil {
			w.state.unreachable(err)
		} else {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		t := time.NewTimer(w.state.interval)
		select {
		case <-req.Context().Done():
			t.Stop()
			if err == nil {
				err = req.Context().Err()
			}
			return nil, err // the caller's own error handling sees the outage
		case <-t.C:
		}
		req = again
	}
}

// WrappedRoundTripper lets client-go reach the transport underneath (to
// close idle connections).
func (w *apiServerWait) WrappedRoundTripper() http.RoundTripper { return w.next }

// notAnswered reports whether err means the API server never got req, or,
// for a request safe to repeat, never answered it.
func notAnswered(req *http.Request, err error) bool {
	if req.Context().Err() != nil {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	if utilnet.IsConnectionRefused(err) {
		return true
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return utilnet.IsConnectionReset(err) || errors.Is(err, syscall.EPIPE) ||
			errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
			utilnet.IsHTTP2ConnectionLost(err) || utilnet.IsProbableEOF(err)
	}
	return false
}

// rejectedWhileStarting is an answer a starting API server gives before
// its authentication and authorization caches are filled.
func rejectedWhileStarting(resp *http.Response) bool {
	return resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden
}

// rewound is req ready to be sent again: itself without a body, a clone
// with a fresh body from GetBody, or false when the body cannot be rebuilt.
func rewound(req *http.Request) (*http.Request, bool) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, true
	}
	if req.GetBody == nil {
		return nil, false
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	again := req.Clone(req.Context())
	again.Body = body
	return again, true
}

// apiServerState is what the requests learnt of the API server.
type apiServerState struct {
	interval time.Duration
	log      *slog.Logger

	mu sync.Mutex
	// down is when a request first found the API server unreachable, zero
	// once one reaches it again; logged is when that was last logged.
	down, logged time.Time
	// back is when a request reached it again after an outage; rejections
	// counts the answers then taken for its startup and waited out.
	back       time.Time
	rejections int
}

func (s *apiServerState) unreachable(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	switch {
	case s.down.IsZero():
		s.down, s.logged = now, now
		s.log.Warn("API server unreachable; requests wait for it", "error", err, "retryEvery", s.interval)
	case now.Sub(s.logged) >= stillDownEvery:
		s.logged = now
		s.log.Warn("API server still unreachable", "for", now.Sub(s.down).Round(time.Second), "error", err)
	}
}

// answered records that a request reached the API server.
func (s *apiServerState) answered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.down.IsZero() {
		s.log.Info("API server reachable again", "after", time.Since(s.down).Round(time.Millisecond))
		s.down, s.back, s.rejections = time.Time{}, time.Now(), 0
	}
}

// starting reports whether an answer with status comes within the startup
// window after an outage, and so is to be waited out.
func (s *apiServerState) starting(status int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.back.IsZero() || time.Since(s.back) >= startupWindow {
		return false
	}
	if s.rejections++; s.rejections == 1 {
		s.log.Info("API server rejects requests while it starts; they wait for it", "status", status, "window", startupWindow)
	}
	return true
}
