package kubechurn

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// firstStatuses times each BackendTLSPolicy's first status.ancestors from
// start, by a list and then a watch of every namespace.
type firstStatuses struct {
	n    int
	mu   sync.Mutex
	t0   time.Time
	seen map[string]time.Duration
	// err is why the watch gave up.
	err error
}

// watchFirstStatuses lists the policies and watches them until ctx ends,
// re-watching (from the last resourceVersion, else a fresh list) at most
// 20 times.
func watchFirstStatuses(ctx context.Context, gateway gwclient.Interface, n int) (*firstStatuses, error) {
	f := &firstStatuses{n: n, seen: map[string]time.Duration{}}
	policies := gateway.GatewayV1().BackendTLSPolicies(metav1.NamespaceAll)
	relist := func() (string, error) {
		list, err := policies.List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", fmt.Errorf("list BackendTLSPolicies: %w", err)
		}
		for i := range list.Items {
			f.observe(&list.Items[i])
		}
		return list.ResourceVersion, nil
	}
	rv, err := relist()
	if err != nil {
		return nil, err
	}
	go func() {
		for range 20 {
			w, err := policies.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
			if err == nil {
				rv, err = f.drain(w, rv)
			}
			if ctx.Err() != nil {
				return
			}
			if err != nil || rv == "" {
				if rv, err = relist(); err != nil {
					f.fail(err)
					return
				}
			}
		}
		f.fail(fmt.Errorf("BackendTLSPolicy watch ended 20 times"))
	}()
	return f, nil
}

// drain reads w until it closes; the resourceVersion to go on from, or ""
// after an error event (a fresh list is needed).
func (f *firstStatuses) drain(w watch.Interface, rv string) (string, error) {
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			return "", nil
		}
		p, ok := ev.Object.(*gwv1.BackendTLSPolicy)
		if !ok {
			continue
		}
		rv = p.ResourceVersion
		f.observe(p)
	}
	return rv, nil
}

func (f *firstStatuses) observe(p *gwv1.BackendTLSPolicy) {
	if len(p.Status.Ancestors) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key := p.Namespace + "/" + p.Name
	if _, ok := f.seen[key]; !ok && !f.t0.IsZero() {
		f.seen[key] = time.Since(f.t0)
	}
}

func (f *firstStatuses) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// start is tlsplane's start: statuses before it are not counted.
func (f *firstStatuses) start(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t0 = t
}

func (f *firstStatuses) since() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return time.Since(f.t0)
}

// wait polls until all n policies have a status (their times from start,
// sorted), bound passes, the watch fails or exited says tlsplane exited.
func (f *firstStatuses) wait(bound time.Duration, exited func() bool) ([]time.Duration, error) {
	deadline := time.Now().Add(bound)
	for {
		f.mu.Lock()
		got, err := len(f.seen), f.err
		var times []time.Duration
		if got >= f.n {
			for _, d := range f.seen {
				times = append(times, d)
			}
		}
		f.mu.Unlock()
		switch {
		case times != nil:
			slices.Sort(times)
			return times, nil
		case err != nil:
			return nil, err
		case exited():
			return nil, fmt.Errorf("tlsplane exited with %d of %d policies' statuses", got, f.n)
		case time.Now().After(deadline):
			return nil, fmt.Errorf("%d of %d policies have a status after %s", got, f.n, bound)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// flowcontrolMetrics are the API server's APF counters and its requests on
// BackendTLSPolicies, by series.
func flowcontrolMetrics(ctx context.Context, kube kubernetes.Interface) (map[string]float64, error) {
	body, err := kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("API server /metrics: %w", err)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		keep := strings.HasPrefix(line, "apiserver_flowcontrol_dispatched_requests_total{") ||
			strings.HasPrefix(line, "apiserver_flowcontrol_rejected_requests_total{") ||
			strings.HasPrefix(line, "apiserver_flowcontrol_request_wait_duration_seconds_sum{") ||
			strings.HasPrefix(line, "apiserver_flowcontrol_request_wait_duration_seconds_count{") ||
			(strings.HasPrefix(line, "apiserver_request_total{") && strings.Contains(line, `resource="backendtlspolicies"`))
		i := strings.LastIndexByte(line, ' ')
		if !keep || i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// metricsDelta is every series that grew from before to after, sorted.
func metricsDelta(before, after map[string]float64) []string {
	var out []string
	for series, v := range after {
		if d := v - before[series]; d > 0 {
			out = append(out, fmt.Sprintf("%s +%g", series, d))
		}
	}
	slices.Sort(out)
	return out
}

// flowNames maps the UIDs of FlowSchemas and priority levels to names.
func flowNames(ctx context.Context, kube kubernetes.Interface) (map[string]string, error) {
	names := map[string]string{"": "(no header)"}
	schemas, err := kube.FlowcontrolV1().FlowSchemas().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list FlowSchemas: %w", err)
	}
	for _, s := range schemas.Items {
		names[string(s.UID)] = s.Name
	}
	levels, err := kube.FlowcontrolV1().PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list PriorityLevelConfigurations: %w", err)
	}
	for _, l := range levels.Items {
		names[string(l.UID)] = l.Name
	}
	return names, nil
}

// splitArgs splits -coldstart.args at spaces.
func splitArgs(s string) []string { return strings.Fields(s) }
