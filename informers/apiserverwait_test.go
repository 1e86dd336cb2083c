package informers

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// closedPort is a loopback address nothing listens on (until the test
// listens there itself).
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// serveLater starts an HTTP server on addr after delay; it records the
// bodies it was sent and answers 200 "ok".
func serveLater(t *testing.T, addr string, delay time.Duration) (bodies func() []string) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+string(b))
		mu.Unlock()
		io.WriteString(w, "ok")
	})}
	timer := time.AfterFunc(delay, func() {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("listen %s: %v", addr, err)
			return
		}
		go srv.Serve(l)
	})
	t.Cleanup(func() { timer.Stop(); srv.Close() })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// waitingClient is a client whose transport waits for the API server the
// way tlsplane's does, with its log in logs.
func waitingClient(logs *bytes.Buffer, interval time.Duration) *http.Client {
	log := slog.New(slog.NewTextHandler(logs, nil))
	base := &http.Transport{DisableKeepAlives: true}
	return &http.Client{Transport: WaitForAPIServer(log, interval)(base)}
}

func TestWaitForAPIServerResendsOnceListening(t *testing.T) {
	addr := closedPort(t)
	bodies := serveLater(t, addr, 700*time.Millisecond)
	var logs bytes.Buffer
	client := waitingClient(&logs, 50*time.Millisecond)

	// A body is re-sent intact: http.NewRequest sets GetBody for bytes.
	const body = `{"status":{"conditions":[]}}`
	req, err := http.NewRequest(http.MethodPut, "http://"+addr+"/status", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("PUT while the server starts: %v (want it sent once the server listens)", err)
	}
	resp.Body.Close()
	if waited := time.Since(began); waited < 600*time.Millisecond || waited > 3*time.Second {
		t.Errorf("answered after %s, want just after the server listened (700 ms)", waited)
	}
	if got := bodies(); len(got) != 1 || got[0] != "PUT "+body {
		t.Errorf("server got %q, want one PUT with the body intact", got)
	}
	for _, want := range []string{"API server unreachable", "API server reachable again"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	if n := strings.Count(logs.String(), "API server unreachable"); n != 1 {
		t.Errorf("the outage logged %d times, want once:\n%s", n, logs.String())
	}
}

func TestWaitForAPIServerEndsWithTheContext(t *testing.T) {
	addr := closedPort(t)
	var logs bytes.Buffer
	client := waitingClient(&logs, 50*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/v1/pods?watch=true", nil)
	began := time.Now()
	_, err := client.Do(req)
	if err == nil {
		t.Fatal("GET to a closed port answered")
	}
	if waited := time.Since(began); waited < 250*time.Millisecond || waited > 2*time.Second {
		t.Errorf("gave up after %s, want when the context ended (300 ms)", waited)
	}
	// The caller sees the outage's own error (client-go classifies it).
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		t.Errorf("error %v, want the dial error", err)
	}
}

func TestWaitForAPIServerLeavesDeadlinesToTheCaller(t *testing.T) {
	addr := closedPort(t)
	var logs bytes.Buffer
	client := waitingClient(&logs, 50*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/apis/coordination.k8s.io/v1/leases", nil)
	began := time.Now()
	if _, err := client.Do(req); err == nil {
		t.Fatal("GET to a closed port answered")
	}
	if waited := time.Since(began); waited > time.Second {
		t.Errorf("a request with a deadline waited %s, want its error at once", waited)
	}
}

// A request that reached the server is never sent again unless it is safe
// to repeat: a POST whose connection broke before the answer fails; a GET
// is sent again.
func TestWaitForAPIServerRepeatsOnlyWhatIsSafe(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Method]++
		n := seen[r.Method]
		mu.Unlock()
		if n == 1 { // the first of each method: the connection breaks unanswered
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		io.WriteString(w, "ok")
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	var logs bytes.Buffer
	client := waitingClient(&logs, 20*time.Millisecond)
	url := "http://" + l.Addr().String() + "/"

	if _, err := client.Post(url, "application/json", strings.NewReader("{}")); err == nil {
		t.Error("POST whose connection broke after it was sent: answered, want its error")
	}
	resp, err := client.Get(url)
	if err != nil {
		t.Errorf("GET whose connection broke before the answer: %v, want it sent again", err)
	} else {
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if seen[http.MethodPost] != 1 || seen[http.MethodGet] != 2 {
		t.Errorf("server saw %v, want POST once and GET twice", seen)
	}
}

// A body that cannot be rebuilt is not sent again.
func TestWaitForAPIServerKeepsAnOpaqueBodyFailed(t *testing.T) {
	addr := closedPort(t)
	var logs bytes.Buffer
	client := waitingClient(&logs, 20*time.Millisecond)
	req, _ := http.NewRequest(http.MethodPut, "http://"+addr+"/", io.NopCloser(strings.NewReader("x")))
	req.GetBody = nil
	began := time.Now()
	if _, err := client.Do(req); err == nil {
		t.Fatal("PUT to a closed port answered")
	}
	if waited := time.Since(began); waited > time.Second {
		t.Errorf("a body that cannot be re-sent waited %s, want its error at once", waited)
	}
}

// roundTripFunc is a scripted transport.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func answer(status int) *http.Response {
	return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(http.StatusText(status)))}
}

// A restarted API server answers 403 until its authorizer's cache is
// filled: right after an outage that is waited out; otherwise, and once
// the startup window has passed, a 403 is the caller's.
func TestWaitForAPIServerWaitsOutAStartingServersRejections(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	var script []func() (*http.Response, error)
	calls := 0
	base := roundTripFunc(func(*http.Request) (*http.Response, error) {
		step := script[min(calls, len(script)-1)]
		calls++
		return step()
	})
	var logs bytes.Buffer
	wait := WaitForAPIServer(slog.New(slog.NewTextHandler(&logs, nil)), time.Millisecond)
	client := &http.Client{Transport: wait(base)}
	get := func() int {
		t.Helper()
		resp, err := client.Get("http://apiserver.invalid/api/v1/secrets")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	fail := func() (*http.Response, error) { return nil, refused }
	forbid := func() (*http.Response, error) { return answer(http.StatusForbidden), nil }
	ok := func() (*http.Response, error) { return answer(http.StatusOK), nil }

	script, calls = []func() (*http.Response, error){forbid}, 0
	if got := get(); got != http.StatusForbidden || calls != 1 {
		t.Errorf("no outage: status %d after %d calls, want 403 at once", got, calls)
	}
	script, calls = []func() (*http.Response, error){fail, fail, forbid, forbid, ok}, 0
	if got := get(); got != http.StatusOK || calls != 5 {
		t.Errorf("after an outage: status %d after %d calls, want 200 after 5", got, calls)
	}
	// Another client of the same config shares what was learnt: still
	// within the window.
	other := &http.Client{Transport: wait(base)}
	script, calls = []func() (*http.Response, error){forbid, ok}, 0
	resp, err := other.Get("http://apiserver.invalid/apis")
	if err != nil || resp.StatusCode != http.StatusOK || calls != 2 {
		t.Errorf("another client in the window: %v %v after %d calls, want 200 after 2", resp, err, calls)
	}
	if n := strings.Count(logs.String(), "rejects requests while it starts"); n != 1 {
		t.Errorf("the starting server's rejections logged %d times, want once:\n%s", n, logs.String())
	}
}
