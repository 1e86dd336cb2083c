package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
)

// The agent serves a Pod's port-forward as the kubelet does, with the
// kubelet's own server side (k8s.io/cri-streaming: SPDY, and the older
// WebSocket channel protocol); what a CRI runtime does under it, connect
// to the port on the Pod's loopback, is done here in the Pod's network
// namespace.

const (
	// forwardIdleTimeout ends a forward nobody uses, as the kubelet's
	// --streaming-connection-idle-timeout does (4h there; the suite's
	// forwards last seconds).
	forwardIdleTimeout = 5 * time.Minute
	// forwardStreamTimeout bounds the client's creation of a port's data
	// and error streams, the kubelet's default.
	forwardStreamTimeout = 30 * time.Second
	// dialTimeout bounds the connection to the Pod's port.
	dialTimeout = 5 * time.Second
)

// portForward answers /portForward/{namespace}/{pod}[/{uid}], which the
// API server's pods/portforward proxies to.
func (a *Agent) portForward(w http.ResponseWriter, r *http.Request) {
	ns, name, uid := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("uid")
	run := a.runOf(ns + "/" + name)
	if run == nil || (uid != "" && uid != string(run.uid)) {
		http.Error(w, fmt.Sprintf("pod %s/%s is not running on node %s", ns, name, a.Node), http.StatusNotFound)
		return
	}
	opts, err := portforward.NewV4Options(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	portforward.ServePortForward(w, r, podPorts{a}, ns+"/"+name, string(run.uid), opts,
		forwardIdleTimeout, forwardStreamTimeout, portforward.SupportedProtocols)
}

func (a *Agent) runOf(key string) *podRun {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running[key]
}

// podPorts connects forwarded streams to the ports of the agent's Pods.
type podPorts struct{ a *Agent }

var _ portforward.PortForwarder = podPorts{}

// PortForward copies stream to and from port on the loopback of Pod
// name (namespace/name) until either side ends; an error goes back to the
// client on the port's error stream.
func (p podPorts) PortForward(ctx context.Context, name, uid string, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	run := p.a.runOf(name)
	if run == nil || string(run.uid) != uid {
		return fmt.Errorf("pod %s (uid %s) is not running on node %s", name, uid, p.a.Node)
	}
	conn, err := dialInNetns(run.host.Netns, net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
	if err != nil {
		return fmt.Errorf("pod %s port %d: %w", name, port, err)
	}
	defer conn.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(conn, stream)
		// The client is done sending: let the Pod's server see the end.
		if tcp, ok := conn.(*net.TCPConn); ok {
			_ = tcp.CloseWrite()
		}
	}()
	_, err = io.Copy(stream, conn)
	stream.Close()
	wg.Wait()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("pod %s port %d: %w", name, port, err)
	}
	return nil
}

// dialInNetns connects to addr from inside network namespace netns: the
// socket is made on a thread moved into it, and stays there after. A
// thread that cannot be moved back is never reused (its goroutine exits
// still locked to it, so the runtime ends the thread).
func dialInNetns(netns, addr string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		conn, restored, err := dialFromNetns(netns, addr)
		if restored {
			runtime.UnlockOSThread()
		}
		done <- result{conn, err}
	}()
	r := <-done
	return r.conn, r.err
}

// dialFromNetns does dialInNetns' work on the locked thread; restored
// says the thread is back in its own namespace.
func dialFromNetns(netns, addr string) (net.Conn, bool, error) {
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return nil, true, err
	}
	defer own.Close()
	target, err := os.Open(filepath.Join("/run/netns", netns))
	if err != nil {
		return nil, true, fmt.Errorf("network namespace %s: %w", netns, err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return nil, true, fmt.Errorf("enter network namespace %s: %w", netns, err)
	}
	conn, err := net.DialTimeout("tcp", addr, dialTimeout)
	if rerr := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); rerr != nil {
		return conn, false, err
	}
	return conn, true, err
}
