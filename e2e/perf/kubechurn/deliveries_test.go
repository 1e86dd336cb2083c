package kubechurn

import (
	"context"
	"net"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// deliveries are the API server's watch events of the edited kinds as a
// watcher of its own sees them, by resourceVersion (etcd's revision: one
// per write, whatever the kind): when the API server delivered an edit to
// its watchers, tlsplane's informers among them. It splits an edit's
// latency into the API server's part and tlsplane's.
type deliveries struct {
	mu      sync.Mutex
	at      map[string]time.Time
	arrived chan struct{} // a slot: something arrived
	// current is the API server's resourceVersion now.
	current func(ctx context.Context) (string, error)
}

// watcher is one kind's watch, from a resourceVersion.
type watcher func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)

// watchDeliveries watches the ConfigMaps, BackendTLSPolicies and
// EndpointSlices of every namespace from now on (the resourceVersion of a
// list of one) until ctx ends.
//
// Its clients have a connection of their own: on the load generator's
// HTTP/2 connection, the watch events waited behind its requests (under
// endpoint churn some arrived after the ADS client had the update).
func watchDeliveries(ctx context.Context, w *world) (*deliveries, error) {
	cfg := rest.CopyConfig(w.config)
	cfg.Dial = (&net.Dialer{}).DialContext // a transport of its own, not client-go's shared one
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	gateway, err := gwclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	d := &deliveries{at: map[string]time.Time{}, arrived: make(chan struct{}, 1),
		current: func(ctx context.Context) (string, error) {
			list, err := kube.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{Limit: 1})
			if err != nil {
				return "", err
			}
			return list.ResourceVersion, nil
		}}
	from, err := d.current(ctx)
	if err != nil {
		return nil, err
	}
	for _, watchKind := range []watcher{
		kube.CoreV1().ConfigMaps("").Watch,
		gateway.GatewayV1().BackendTLSPolicies("").Watch,
		kube.DiscoveryV1().EndpointSlices("").Watch,
	} {
		go d.follow(ctx, watchKind, from)
	}
	return d, nil
}

// follow records every event's arrival, watching again from the last
// version seen when the API server ends the watch (its request timeout),
// or from now when it says that version is gone (what came between is
// not recorded: those edits go unsplit).
func (d *deliveries) follow(ctx context.Context, watchKind watcher, from string) {
	for ctx.Err() == nil {
		wi, err := watchKind(ctx, metav1.ListOptions{ResourceVersion: from, AllowWatchBookmarks: true})
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		for ev := range wi.ResultChan() {
			at := time.Now()
			if ev.Type == watch.Error {
				if rv, err := d.current(ctx); err == nil {
					from = rv
				}
				continue
			}
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				continue
			}
			from = m.GetResourceVersion()
			if ev.Type == watch.Bookmark {
				continue
			}
			d.mu.Lock()
			d.at[from] = at
			d.mu.Unlock()
			select {
			case d.arrived <- struct{}{}:
			default:
			}
		}
		wi.Stop()
	}
}

// of is when the write that made resourceVersion rv was delivered,
// waiting up to patience for it.
func (d *deliveries) of(rv string, patience time.Duration) (time.Time, bool) {
	deadline := time.After(patience)
	for {
		d.mu.Lock()
		at, ok := d.at[rv]
		d.mu.Unlock()
		if ok {
			return at, true
		}
		select {
		case <-d.arrived:
		case <-deadline:
			return time.Time{}, false
		}
	}
}
