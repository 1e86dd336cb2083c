package node

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The agent answers the kubelet endpoints the suite reaches through the
// API server, which proxies a Pod's subresources to the Node's InternalIP
// and status.daemonEndpoints.kubeletEndpoint.Port: a container's log (GET
// /containerLogs/{namespace}/{pod}/{container}, pods/log) and a
// port-forward (/portForward/{namespace}/{pod}[/{uid}], pods/portforward;
// portforward.go) and a command (/exec/{namespace}/{pod}[/{uid}]/{container},
// pods/exec; exec.go).

// KubeletTLS is the trust between the API server and the agent's kubelet
// endpoint: the agent serves Certificate (issued for the Node's address by
// the CA the API server verifies kubelets with) and answers only a client
// certificate ClientCAs verify whose common name is ClientName.
type KubeletTLS struct {
	Certificate tls.Certificate
	ClientCAs   *x509.CertPool
	ClientName  string
}

// serveKubelet listens on the bridge's host address (the Node's
// InternalIP) and serves the kubelet endpoint until ctx ends; it returns
// the port.
func (a *Agent) serveKubelet(ctx context.Context, k KubeletTLS) (int32, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(a.net.Gateway, "0"))
	if err != nil {
		return 0, fmt.Errorf("kubelet endpoint: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", a.containerLogs)
	// SPDY upgrades arrive as POST, WebSocket ones as GET.
	mux.HandleFunc("/portForward/{namespace}/{pod}", a.portForward)
	mux.HandleFunc("/portForward/{namespace}/{pod}/{uid}", a.portForward)
	mux.HandleFunc("/exec/{namespace}/{pod}/{container}", a.containerExec)
	mux.HandleFunc("/exec/{namespace}/{pod}/{uid}/{container}", a.containerExec)
	srv := &http.Server{
		Handler:           onlyClient(k.ClientName, mux),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			Certificates: []tls.Certificate{k.Certificate},
			ClientAuth:   tls.RequireAndVerifyClientCert,
			ClientCAs:    k.ClientCAs,
		},
	}
	go func() {
		if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.t.Logf("node agent: kubelet endpoint: %v", err)
		}
	}()
	go func() { <-ctx.Done(); srv.Close() }()
	return int32(ln.Addr().(*net.TCPAddr).Port), nil
}

// onlyClient refuses every caller but the client certificate named name
// (TLS has verified its chain already).
func onlyClient(name string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != name {
			http.Error(w, "forbidden: only "+name+" may call the kubelet endpoint", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// containerLogs writes a container's log as the kubelet does, with the
// query parameters the API server passes on from PodLogOptions.
func (a *Agent) containerLogs(w http.ResponseWriter, r *http.Request) {
	ns, pod, name := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	opts, err := logOptionsOf(r.URL.Query(), time.Now())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	run := a.running[ns+"/"+pod]
	a.mu.Unlock()
	if run == nil {
		http.Error(w, fmt.Sprintf("pod %s/%s is not running on node %s", ns, pod, a.Node), http.StatusNotFound)
		return
	}
	log := run.logs[name]
	if log == nil {
		http.Error(w, fmt.Sprintf("container %s is not in pod %s/%s", name, ns, pod), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	out := bufio.NewWriter(w)
	lines, next, changed := log.from(0)
	lines = opts.tailOf(lines)
	budget := opts.limitBytes
	for {
		if !opts.write(out, lines, &budget) || !opts.follow {
			out.Flush()
			return
		}
		out.Flush()
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		case <-run.stopped:
			return
		}
		lines, next, changed = log.from(next)
	}
}

// logOptions are the kubelet's container log query parameters.
type logOptions struct {
	follow, timestamps bool
	since              time.Time // zero: all
	tail               int       // -1: all
	limitBytes         int       // -1: no limit
	stream             string    // "" or All: both
}

func logOptionsOf(q url.Values, now time.Time) (logOptions, error) {
	o := logOptions{tail: -1, limitBytes: -1}
	var err error
	flag := func(name string) bool {
		v := q.Get(name)
		b, perr := strconv.ParseBool(v)
		if v != "" && perr != nil && err == nil {
			err = fmt.Errorf("query parameter %s=%q: not a boolean", name, v)
		}
		return b
	}
	number := func(name string) int {
		v := q.Get(name)
		if v == "" {
			return -1
		}
		n, perr := strconv.Atoi(v)
		if (perr != nil || n < 0) && err == nil {
			err = fmt.Errorf("query parameter %s=%q: not a count", name, v)
		}
		return n
	}
	o.follow, o.timestamps = flag("follow"), flag("timestamps")
	if flag("previous") && err == nil {
		// Restarts append to one log here: there is no previous instance's.
		err = errors.New("previous: the node agent keeps one log per container across restarts, with no previous instance's")
	}
	o.tail, o.limitBytes = number("tailLines"), number("limitBytes")
	if s := number("sinceSeconds"); s >= 0 {
		o.since = now.Add(-time.Duration(s) * time.Second)
	}
	if v := q.Get("sinceTime"); v != "" {
		t, perr := time.Parse(time.RFC3339, v)
		if perr != nil && err == nil {
			err = fmt.Errorf("query parameter sinceTime=%q: %v", v, perr)
		}
		o.since = t
	}
	switch o.stream = q.Get("stream"); o.stream {
	case "", "All", streamNames[stdout], streamNames[stderr]:
	default:
		if err == nil {
			err = fmt.Errorf("query parameter stream=%q: All, Stdout or Stderr", o.stream)
		}
	}
	return o, err
}

// tailOf is the last tailLines of lines (all without tailLines); as the
// kubelet's, counted before sinceTime and stream select.
func (o logOptions) tailOf(lines []logLine) []logLine {
	if o.tail >= 0 && o.tail < len(lines) {
		return lines[len(lines)-o.tail:]
	}
	return lines
}

// write writes the lines o selects, within budget bytes (-1: no limit);
// false once the budget is spent.
func (o logOptions) write(w *bufio.Writer, lines []logLine, budget *int) bool {
	for _, l := range lines {
		if l.at.Before(o.since) || (o.stream != "" && o.stream != "All" && o.stream != streamNames[l.stream]) {
			continue
		}
		line := append([]byte(nil), l.text...)
		if o.timestamps {
			line = append([]byte(l.at.UTC().Format(time.RFC3339Nano)+" "), line...)
		}
		line = append(line, '\n')
		if *budget >= 0 {
			if len(line) >= *budget {
				w.Write(line[:*budget])
				*budget = 0
				return false
			}
			*budget -= len(line)
		}
		w.Write(line)
	}
	return true
}
