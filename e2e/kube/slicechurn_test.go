package kube

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// churnAddress is the churned endpoint's address at generation g, so a
// load assignment names the update it carries (g below 62,500).
func churnAddress(g int) string { return fmt.Sprintf("172.16.%d.%d", g/250%250, g%250+1) }

// churnGeneration is churnAddress's inverse.
func churnGeneration(addr string) (int, bool) {
	a, err := netip.ParseAddr(addr)
	if err != nil || !a.Is4() {
		return 0, false
	}
	b := a.As4()
	if b[0] != 172 || b[1] != 16 || b[3] == 0 {
		return 0, false
	}
	return int(b[2])*250 + int(b[3]) - 1, true
}

func churnService(i int) string { return fmt.Sprintf("svc-%d", i) }

// churnSlice is Service i's EndpointSlice at generation g: one ready
// endpoint on port 8443.
func churnSlice(ns string, i, g int) *discoveryv1.EndpointSlice {
	ready := true
	port, portName := int32(8443), "https"
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: churnService(i) + "-x",
			Labels: map[string]string{discoveryv1.LabelServiceName: churnService(i)}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{churnAddress(g)},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
	}
}

// sliceUpdate is one update the API server accepted: Service slice's
// EndpointSlice at generation gen, the call begun at start.
type sliceUpdate struct {
	slice, gen int
	start      time.Time
}

// sliceChurn updates n EndpointSlices round robin, as the EndpointSlice
// controller does (an Update of the object last written), through the API
// server or, when that fails and one is set, through a fallback (a second
// API server on the same etcd during an outage).
type sliceChurn struct {
	ns       string
	n        int
	primary  kubernetes.Interface
	fallback atomic.Pointer[kubernetes.Interface]

	mu     sync.Mutex
	last   []*discoveryv1.EndpointSlice
	made   []sliceUpdate
	failed int
	gen    int
}

// newSliceChurn creates the n slices at generations 0..n-1.
func newSliceChurn(ctx context.Context, kube kubernetes.Interface, ns string, n int) (*sliceChurn, error) {
	c := &sliceChurn{ns: ns, n: n, primary: kube, last: make([]*discoveryv1.EndpointSlice, n), gen: n}
	for i := range n {
		s, err := kube.DiscoveryV1().EndpointSlices(ns).Create(ctx, churnSlice(ns, i, i), metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("create EndpointSlice %s/%s: %w", ns, churnSlice(ns, i, i).Name, err)
		}
		c.last[i] = s
	}
	return c, nil
}

// run updates rate slices a second until ctx ends.
func (c *sliceChurn) run(ctx context.Context, rate int) {
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			c.update(ctx)
		}
	}
}

// update writes the next generation to the next slice; a failed update is
// counted and leaves no record.
func (c *sliceChurn) update(ctx context.Context) {
	c.mu.Lock()
	g := c.gen
	c.gen++
	i := g % c.n
	s := churnSlice(c.ns, i, g)
	s.ResourceVersion = c.last[i].ResourceVersion
	c.mu.Unlock()

	start := time.Now()
	out, err := c.write(ctx, c.primary, i, s)
	if err != nil {
		if fb := c.fallback.Load(); fb != nil {
			out, err = c.write(ctx, *fb, i, s)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.failed++
		return
	}
	c.last[i] = out
	c.made = append(c.made, sliceUpdate{slice: i, gen: g, start: start})
}

// write is one Update, bounded so the churn keeps its pace; after a
// conflict (an earlier update whose answer was lost did go through) the
// slice is read again for the next one.
func (c *sliceChurn) write(ctx context.Context, kube kubernetes.Interface, i int, s *discoveryv1.EndpointSlice) (*discoveryv1.EndpointSlice, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	out, err := kube.DiscoveryV1().EndpointSlices(c.ns).Update(ctx, s, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		if fresh, gerr := kube.DiscoveryV1().EndpointSlices(c.ns).Get(ctx, s.Name, metav1.GetOptions{}); gerr == nil {
			c.mu.Lock()
			c.last[i] = fresh
			c.mu.Unlock()
		}
	}
	return out, err
}

// updates are the accepted updates so far, in order, and the failed count.
func (c *sliceChurn) updates() ([]sliceUpdate, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sliceUpdate(nil), c.made...), c.failed
}

// count is how many updates were accepted so far.
func (c *sliceChurn) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.made)
}

// latest is each slice's last accepted generation.
func (c *sliceChurn) latest() []int {
	out := make([]int, c.n)
	for i := range out {
		out[i] = i
	}
	made, _ := c.updates()
	for _, u := range made {
		out[u.slice] = u.gen
	}
	return out
}

// stored is each slice's generation as the API server holds it now.
func (c *sliceChurn) stored(ctx context.Context) ([]int, error) {
	out := make([]int, c.n)
	for i := range c.n {
		s, err := c.primary.DiscoveryV1().EndpointSlices(c.ns).Get(ctx, churnService(i)+"-x", metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		g, ok := churnGeneration(s.Endpoints[0].Addresses[0])
		if !ok {
			return nil, fmt.Errorf("EndpointSlice %s/%s: address %s is not the churn's", c.ns, s.Name, s.Endpoints[0].Addresses[0])
		}
		out[i] = g
	}
	return out, nil
}

// servedGenerations records, per slice, each generation a delta ADS
// client was served and when.
type servedGenerations struct {
	ns string
	mu sync.Mutex
	// arrivals[i] are slice i's generations in the order served.
	arrivals [][]sliceArrival
	changed  chan struct{}
}

type sliceArrival struct {
	gen int
	at  time.Time
}

// watchServedGenerations subscribes a delta ADS client of fleet to cp.
func watchServedGenerations(ctx context.Context, cp *controlPlane, ns string, n int, fleet string) (*servedGenerations, <-chan error, error) {
	s := &servedGenerations{ns: ns, arrivals: make([][]sliceArrival, n), changed: make(chan struct{}, 1)}
	done, err := harness.WatchLoadAssignments(ctx, cp.xds, &corev3.Node{Id: "restart-client", Cluster: fleet}, s.add)
	return s, done, err
}

func (s *servedGenerations) add(la harness.LoadAssignment) {
	for i := range s.arrivals {
		if la.Cluster != clusterName(s.ns, churnService(i), 443) {
			continue
		}
		for _, e := range la.Endpoints {
			host, _, err := net.SplitHostPort(e)
			if g, ok := churnGeneration(host); err == nil && ok {
				s.mu.Lock()
				s.arrivals[i] = append(s.arrivals[i], sliceArrival{g, la.At})
				s.mu.Unlock()
				select {
				case s.changed <- struct{}{}:
				default:
				}
			}
		}
	}
}

// current is each slice's last served generation (-1: none yet).
func (s *servedGenerations) current() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int, len(s.arrivals))
	for i, a := range s.arrivals {
		out[i] = -1
		if len(a) > 0 {
			out[i] = a[len(a)-1].gen
		}
	}
	return out
}

// reached is when slice i was first served generation gen or a later one.
func (s *servedGenerations) reached(i, gen int) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.arrivals[i] {
		if a.gen >= gen {
			return a.at, true
		}
	}
	return time.Time{}, false
}

// waitReached waits, bounded, until slice i was served gen or later.
func (s *servedGenerations) waitReached(i, gen int, timeout time.Duration) (time.Time, bool) {
	deadline := time.After(timeout)
	for {
		if at, ok := s.reached(i, gen); ok {
			return at, true
		}
		select {
		case <-s.changed:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			return time.Time{}, false
		}
	}
}

// waitAll waits, bounded, until every slice's last served generation is
// want's; the error names the slices that differ.
func (s *servedGenerations) waitAll(want []int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		got := s.current()
		var off []string
		for i := range want {
			if got[i] != want[i] {
				off = append(off, fmt.Sprintf("%s: served %d, want %d", churnService(i), got[i], want[i]))
			}
		}
		if len(off) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: %s", timeout, strings.Join(off, "; "))
		}
		select {
		case <-s.changed:
		case <-time.After(100 * time.Millisecond):
		}
	}
}
